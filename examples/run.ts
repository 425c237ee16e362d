/**
 * `npm run example -- NAME` runs examples/NAME.ts; without a name it lists them.
 * Examples import from 'duebatch' like user code; the `source` export condition maps it to src/.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const folder = fileURLToPath(new URL('.', import.meta.url));
const names = readdirSync(folder)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.slice(0, -3))
  .sort();
const name = process.argv[2];
if (name === undefined || !names.includes(name)) {
  if (name !== undefined) console.error(`no example named ${JSON.stringify(name)}`);
  console.error(`usage: npm run example -- NAME\nexamples: ${names.join(', ')}`);
  process.exitCode = name === undefined ? 0 : 2;
} else {
  await import(pathToFileURL(`${folder}${name}.ts`).href);
}
