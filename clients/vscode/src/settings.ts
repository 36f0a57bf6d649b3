// The `citelens` settings sent to the server (initializationOptions and workspace/configuration).
import * as vscode from "vscode";

/** Setting keys (without the `citelens.` prefix) that belong to the server, from our manifest. */
export function serverSettingKeys(packageJSON: any): string[] {
  const props = packageJSON?.contributes?.configuration?.properties ?? {};
  return Object.keys(props)
    .filter((k) => k.startsWith("citelens.") && !k.startsWith("citelens.server."))
    .map((k) => k.slice("citelens.".length));
}

/** The current value of every server setting, keyed by its camelCase name. */
export function currentServerSettings(keys: string[]): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("citelens");
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    out[key] = config.get(key);
  }
  return out;
}
