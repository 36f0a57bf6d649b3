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

/** Setting keys (without the `citelens.` prefix) a workspace sets only when it is trusted:
 * the manifest's `capabilities.untrustedWorkspaces.restrictedConfigurations`. */
export function restrictedKeys(packageJSON: any): string[] {
  const restricted = packageJSON?.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  return restricted.filter((k: string) => k.startsWith("citelens.")).map((k: string) => k.slice("citelens.".length));
}

/** The server settings the user set, keyed by their camelCase name; unset ones are absent.
 *
 * With `trust` (whether the workspace is trusted, and which keys need it), the object also
 * says where the values came from, for the server to decide (`client`: `workspaceTrusted`,
 * `fromWorkspace`: the restricted keys whose value is the workspace's, `userValues`: the
 * user's own value of those): a repository's .vscode/settings.json never decides what
 * counts as verified in a workspace the user has not trusted (the server says so in its
 * log). VS Code's own `get` drops such values too; `inspect`, which this reads, does not. */
export function userSettings(
  keys: string[],
  inspect: (key: string) => Inspected | undefined,
  trust?: { trusted: boolean; restricted: string[] },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fromWorkspace: string[] = [];
  const userValues: Record<string, unknown> = {};
  for (const key of keys) {
    const inspected = inspect(key);
    const value = userValue(inspected);
    if (value === undefined) {
      continue;
    }
    out[key] = value;
    const workspace = inspected?.workspaceFolderValue !== undefined || inspected?.workspaceValue !== undefined;
    if (trust && workspace && trust.restricted.includes(key)) {
      fromWorkspace.push(key);
      if (inspected?.globalValue !== undefined) {
        userValues[key] = inspected.globalValue;
      }
    }
  }
  if (trust) {
    out.client = { workspaceTrusted: trust.trusted, fromWorkspace, userValues };
  }
  return out;
}
