import { spawn } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { helperThreadNice, threadExecArgv } from './threads.js';

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningChild {
  pid: number | undefined;
  /** Resolves when the process has exited, however it ended (it never rejects). */
  exited: Promise<ChildExit>;
}

/**
 * Runs `module` (a `threadModule` URL) in a process of its own with `args` and exactly `env`: its
 * parsing, memory and collections never touch this process's event loop. Its output goes to this
 * process's (so its log lines join this process's log), and it runs at the helper threads' nice
 * value (or this process's, if higher), so that on a busy node the event loop gets a core first.
 */
export function runChild(module: URL, args: string[], env: NodeJS.ProcessEnv): RunningChild {
  const child = spawn(process.execPath, [...threadExecArgv, fileURLToPath(module), ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<ChildExit>((resolve) => {
    // A process that could not start emits 'error' and no 'exit'.
    child.once('error', () => resolve({ code: child.exitCode ?? 1, signal: null }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  if (child.pid !== undefined && process.platform === 'linux') {
    try {
      // Never above this process's own priority (a node started under `nice` stays above its child).
      setPriority(child.pid, Math.max(getPriority(), helperThreadNice));
    } catch {
      // It exited already.
    }
  }
  return { pid: child.pid, exited };
}
