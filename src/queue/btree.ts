/**
 * The one place that imports `sorted-btree`. The package is CommonJS with `exports.default`:
 * under Node's ESM loader a default import yields the whole `module.exports` object (the class
 * is its `.default`), while bundlers such as Vite may hand over the class itself. Resolve both
 * here, once; `test/queue/btree-interop.test.ts` checks it.
 */
import btreeModule from 'sorted-btree';
import type * as btreeTypes from 'sorted-btree';

type BTreeClass = typeof btreeModule.default;

const loaded = btreeModule as unknown as BTreeClass | { default: BTreeClass };

/** The `sorted-btree` class, whichever way the loader handed it over. */
export const BTree: BTreeClass = typeof loaded === 'function' ? loaded : loaded.default;

/** A `sorted-btree` instance. */
export type BTree<K, V> = btreeTypes.default<K, V>;
