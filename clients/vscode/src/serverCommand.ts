// How the CiteLens language server is started, and whether that can work.
import * as fs from "fs";
import * as path from "path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which setting produced the command, for error messages. */
  origin: "citelens.server.pythonPath" | "citelens.server.command";
}

export const DEFAULT_COMMAND = ["citelens", "serve"];

/** `<python> -m citelens serve` when a Python is set, else `citelens.server.command`. */
export function resolveServerCommand(
  pythonPath: string | undefined,
  command: string[] | undefined,
): ServerCommand {
  if (pythonPath && pythonPath.trim()) {
    return {
      command: pythonPath.trim(),
      args: ["-m", "citelens", "serve"],
      origin: "citelens.server.pythonPath",
    };
  }
  const argv = command && command.length > 0 ? command : DEFAULT_COMMAND;
  return { command: argv[0], args: argv.slice(1), origin: "citelens.server.command" };
}

function isExecutableFile(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) {
      return false;
    }
    if (process.platform !== "win32") {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/** The full path of an executable (looked up on PATH when it has no directory), or undefined. */
export function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (command.includes("/") || command.includes("\\")) {
    return isExecutableFile(command) ? command : undefined;
  }
  const dirs = (env.PATH ?? env.Path ?? "").split(path.delimiter).filter((d) => d);
  const exts =
    process.platform === "win32"
      ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").map((e) => e.toLowerCase())]
      : [""];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The message shown when the server cannot be started: what to set, in one sentence. */
export function missingServerMessage(cmd: ServerCommand, detail?: string): string {
  const what =
    cmd.origin === "citelens.server.pythonPath"
      ? `\`${cmd.command} -m citelens serve\` failed`
      : `\`${cmd.command}\` was not found`;
  const suffix = detail ? ` (${detail})` : "";
  return (
    `CiteLens: cannot start the language server: ${what}${suffix}; set citelens.server.command ` +
    'to your citelens program, for example ["/path/to/.venv/bin/citelens", "serve"].'
  );
}
