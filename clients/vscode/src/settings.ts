// The `citelens` settings sent to the server (initializationOptions, workspace/configuration and
// workspace/didChangeConfiguration). No `vscode` import: the unit tests run it in plain node.
//
// Only the values the user set are sent (user, workspace or folder settings): a setting left
// alone is absent, so the server's precedence applies to it — user setting > environment
// variable (CITELENS_*) > the server's default. Sending `config.get(key)` would send the
// manifest's default for every setting, and that default would outrank the environment.

/** Setting keys (without the `citelens.` prefix) that belong to the server, from our manifest. */
export function serverSettingKeys(packageJSON: any): string[] {
  const props = packageJSON?.contributes?.configuration?.properties ?? {};
  return Object.keys(props)
    .filter((k) => k.startsWith("citelens.") && !k.startsWith("citelens.server."))
    .map((k) => k.slice("citelens.".length));
}

/** What `WorkspaceConfiguration.inspect` tells about one setting (the parts we read). */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The value the user set for one setting (the most specific scope wins), or undefined. */
export function userValue(inspected: Inspected | undefined): unknown {
  if (!inspected) {
    return undefined;
  }
  for (const value of [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue]) {
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

/** The server settings the user set, keyed by their camelCase name; unset ones are absent. */
export function userSettings(
  keys: string[],
  inspect: (key: string) => Inspected | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = userValue(inspect(key));
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}
