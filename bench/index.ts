/**
 * `npm run bench`: runs every benchmark in this folder, one after the other, in one process
 * per subject so one subject's heap does not weigh on the next. `npm run bench -- queue` runs one.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const subjects = ['queue', 'dispatch', 'timers', 'redis'];
const args = process.argv.slice(2);
const chosen = args.filter((arg) => !arg.startsWith('--'));
const flags = args.filter((arg) => arg.startsWith('--'));
let failed = false;
for (const subject of chosen.length > 0 ? chosen : subjects) {
  const file = fileURLToPath(new URL(`./${subject}.ts`, import.meta.url));
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...flags], { stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
