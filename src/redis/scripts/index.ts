/** Every Lua script of the Redis queues, with its SHA-1 for EVALSHA. */
import { defineScript } from '../script-runner.js';
import { COUNTS_SCRIPT, ENTRIES_SCRIPT, NEXT_DUE_SCRIPT, REMOVE_SCRIPT, RESUME_SCRIPT } from './inspect.js';
import { PUBLISH_SCRIPT } from './publish.js';
import { ACK_SCRIPT, EXTEND_SCRIPT, NACK_SCRIPT, SPLIT_SCRIPT } from './settle.js';
import { TAKE_SCRIPT } from './take.js';

export const scripts = {
  publish: defineScript('publish', PUBLISH_SCRIPT),
  take: defineScript('take', TAKE_SCRIPT),
  ack: defineScript('ack', ACK_SCRIPT),
  nack: defineScript('nack', NACK_SCRIPT),
  extend: defineScript('extend', EXTEND_SCRIPT),
  split: defineScript('split', SPLIT_SCRIPT),
  counts: defineScript('counts', COUNTS_SCRIPT),
  nextDue: defineScript('next-due', NEXT_DUE_SCRIPT),
  entries: defineScript('entries', ENTRIES_SCRIPT),
  remove: defineScript('remove', REMOVE_SCRIPT),
  resume: defineScript('resume', RESUME_SCRIPT),
} as const;
