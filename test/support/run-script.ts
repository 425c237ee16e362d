/** Runs one of the project's TypeScript entry points as a child process, as its npm script does. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** How a child process ended and what it printed. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `file` (relative to the repo root) with `args` under tsx; kills it if it runs past `timeoutMs`. */
export function runScript(file: string, args: readonly string[], timeoutMs = 15_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
