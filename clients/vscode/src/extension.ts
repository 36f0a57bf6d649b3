// CiteLens for VS Code: starts `citelens serve` and connects it over stdio.
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { restrictedKeys, serverSettingKeys, userSettings } from "./settings";
import {
  findExecutable,
  missingServerMessage,
  resolveServerCommand,
  ServerCommand,
} from "./serverCommand";

/** Commands the server implements; contributed to the Command Palette by our manifest. */
const SERVER_COMMANDS = ["citelens.verifyNow", "citelens.clearCache", "citelens.report"];

const DOCUMENT_SELECTOR = [
  ...["latex", "tex", "bibtex", "markdown", "rmd", "rmarkdown", "quarto"].map((language) => ({
    language,
  })),
  ...["tex", "bib", "md", "Rmd", "qmd"].map((ext) => ({ scheme: "file", pattern: `**/*.${ext}` })),
];

let client: LanguageClient | undefined;

/** Settings a workspace sets only when trusted (from our manifest). */
let restricted: string[] = [];

/** The server settings the user set (unset ones are absent: see settings.ts), and where the
 * restricted ones came from, with the workspace's trust (the server decides and says so). */
function currentServerSettings(keys: string[], scope?: vscode.Uri): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("citelens", scope);
  return userSettings(keys, (key) => config.inspect(key), {
    trusted: vscode.workspace.isTrusted,
    restricted,
  });
}

async function showStartError(cmd: ServerCommand, detail?: string): Promise<void> {
  const openSettings = "Open Settings";
  const choice = await vscode.window.showErrorMessage(missingServerMessage(cmd, detail), openSettings);
  if (choice === openSettings) {
    await vscode.commands.executeCommand("workbench.action.openSettings", "citelens.server");
  }
}

/** Show the report returned by `citelens.report` as JSON in a new, untitled editor. */
async function openReport(result: unknown): Promise<void> {
  const content = typeof result === "string" ? result : JSON.stringify(result, null, 2);
  const doc = await vscode.workspace.openTextDocument({ language: "json", content });
  await vscode.window.showTextDocument(doc, { preview: false });
}

async function afterCommand(command: string, result: unknown): Promise<unknown> {
  if (command === "citelens.report") {
    await openReport(result);
  }
  return result;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("citelens");
  const cmd = resolveServerCommand(
    config.get<string>("server.pythonPath"),
    config.get<string[]>("server.command"),
  );
  if (!findExecutable(cmd.command)) {
    void showStartError(cmd);
    return;
  }

  const keys = serverSettingKeys(context.extension.packageJSON);
  restricted = restrictedKeys(context.extension.packageJSON);
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    // Only the settings the user set reach the server (see settings.ts), at start, when the
    // server asks (workspace/configuration) and when they change.
    initializationOptions: currentServerSettings(keys),
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers;
          }
          return params.items.map((item, i) =>
            item.section === "citelens"
              ? currentServerSettings(keys, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
              : answers[i],
          );
        },
      },
      // The client registers the server's commands; we only add what happens with the result.
      executeCommand: async (command, args, next) => afterCommand(command, await next(command, args)),
    },
  };
  client = new LanguageClient("citelens", "CiteLens", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    void showStartError(cmd, err instanceof Error ? err.message : String(err));
    return;
  }

  // Commands the server did not announce still get a palette entry that asks it.
  const announced = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  for (const command of SERVER_COMMANDS.filter((c) => !announced.includes(c))) {
    context.subscriptions.push(
      vscode.commands.registerCommand(command, async (...args: unknown[]) => {
        const result = await client?.sendRequest(ExecuteCommandRequest.type, {
          command,
          arguments: args,
        });
        return afterCommand(command, result);
      }),
    );
  }
  context.subscriptions.push(
    // a workspace the user trusts now: its restricted settings apply
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void client?.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { citelens: currentServerSettings(keys) },
      });
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("citelens") && client) {
        void client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { citelens: currentServerSettings(keys) },
        });
      }
      if (e.affectsConfiguration("citelens.server")) {
        void vscode.window
          .showInformationMessage("CiteLens: reload the window to use the new server command.", "Reload")
          .then((c) => c && vscode.commands.executeCommand("workbench.action.reloadWindow"));
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
}
