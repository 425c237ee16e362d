/**
 * `sorted-btree` is CommonJS with `exports.default`. Node's ESM loader and Vite hand its default
 * import over differently; src/queue/btree.ts resolves both. These tests pin down both halves.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BTree } from '../../src/queue/btree.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('sorted-btree interop', () => {
  it('resolves a working BTree class under the test loader', () => {
    expect(typeof BTree).toBe('function');
    // A descending comparator: the custom one must be used, not the default order.
    const tree = new BTree<number, string>(undefined, (a, b) => b - a);
    tree.set(1, 'one');
    tree.set(3, 'three');
    tree.set(2, 'two');

    expect(tree.get(2)).toBe('two');
    expect(tree.minKey()).toBe(3);
    expect([...tree.keys()]).toEqual([3, 2, 1]);
    tree.checkValid();
  });

  it('under plain Node ESM, the default import is the module object and its .default is the class', () => {
    const script = [
      "import m from 'sorted-btree';",
      'const C = m.default;',
      'const t = new C(undefined, (a, b) => a - b);',
      't.set(5, 1); t.set(4, 2);',
      'console.log(JSON.stringify({ defaultType: typeof m, classType: typeof C, name: C.name, min: t.minKey() }));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });

    expect(JSON.parse(out)).toEqual({ defaultType: 'object', classType: 'function', name: 'BTree', min: 4 });
  });
});
