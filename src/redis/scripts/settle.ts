/** The scripts that settle claims: ack (many at once), nack, extend a lease, split. */
import { PRELUDE } from './prelude.js';

/**
 * ACK: removes claimed batches for good, each checked on its own.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] n, then n pairs: batch id, token ('' = the current claim).
 * Returns: one code per pair: 'ok', 'unknown' (no such claim: unknown id, settled, or a stranger's
 *   token) or 'expired' (the token's lease ran out). Only the 'ok' ones changed anything.
 */
export const ACK_SCRIPT = `${PRELUDE}
reap()
local res = {}
for i = 1, tonumber(ARGV[6]) do
  local id, tok = ARGV[5 + i * 2], ARGV[6 + i * 2]
  local code = resolve(id, tok)
  if code == 'ok' then
    local f = redis.call('HMGET', bKey(id), 'key', 'n')
    redis.call('DEL', bKey(id))
    redis.call('ZREM', LEASE, id)
    dClaimed = dClaimed - tonumber(f[2])
    local st = load(f[1])
    unplace(st)
    st.c = st.c - 1
    place(st)
  end
  res[i] = code
end
finish()
return res
`;

/**
 * NACK: puts a claimed batch back in front of its key, at the place the key had when claimed.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] batch id, [7] token ('' = the current claim),
 *   [8] notBefore ('' = none), [9] delayMs ('' = none): the key is not claimable before
 *   max(notBefore, now + delayMs).
 * Returns: 'ok', 'unknown' or 'expired' (see ACK); only 'ok' changed anything.
 */
export const NACK_SCRIPT = `${PRELUDE}
local id, tok = ARGV[6], ARGV[7]
local notBefore = 0
if ARGV[8] ~= '' then notBefore = tonumber(ARGV[8]) end
if ARGV[9] ~= '' then notBefore = math.max(notBefore, now + tonumber(ARGV[9])) end
reap()
local code = resolve(id, tok)
if code ~= 'ok' then return code end
if notBefore <= now then notBefore = 0 end
giveBack(id, 'nack', notBefore)
finish()
return 'ok'
`;

/**
 * EXTEND: moves a claim's lease to now + leaseMs.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] batch id, [7] token ('' = the current claim), [8] leaseMs.
 * Returns: {'ok', batch} with the batch as TAKE returns it, or {code} ('unknown' / 'expired').
 */
export const EXTEND_SCRIPT = `${PRELUDE}
local id, tok, leaseMs = ARGV[6], ARGV[7], tonumber(ARGV[8])
reap()
local code = resolve(id, tok)
if code ~= 'ok' then return { code } end
local leaseAt = num(now + leaseMs)
redis.call('HSET', bKey(id), 'lease', leaseAt)
redis.call('ZADD', LEASE, leaseAt, id)
finish()
return { 'ok', batchReply(id) }
`;

/**
 * SPLIT: replaces a claimed batch by parts \`<id>.1\`, \`<id>.2\`, … of counts[i] values each, in
 * order, each with its own token and the batch's lease, each settled on its own.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] batch id, [7] token ('' = the current claim), [8] k, then k counts.
 * Returns: {'ok', part, part, …} (parts as TAKE returns batches), {'counts', n} when the counts do not
 *   add up to the batch's n values, or {code} ('unknown' / 'expired'). Only 'ok' changed anything.
 */
export const SPLIT_SCRIPT = `${PRELUDE}
local id, tok, k = ARGV[6], ARGV[7], tonumber(ARGV[8])
reap()
local code = resolve(id, tok)
if code ~= 'ok' then return { code } end
local f = redis.call('HMGET', bKey(id), 'key', 'n', 'v', 'sk', 'sq', 'enq', 'ord', 'span', 'att', 'lease', 'xt')
local n, total = tonumber(f[2]), 0
for i = 1, k do total = total + tonumber(ARGV[8 + i]) end
if total ~= n then return { 'counts', n } end
if k == 1 then return { 'ok', batchReply(id) } end
local values, ord, span = cmsgpack.unpack(f[3]), tonumber(f[7]), tonumber(f[8]) / k
redis.call('DEL', bKey(id))
redis.call('ZREM', LEASE, id)
redis.call('HINCRBY', sKey(f[1]), 'c', k - 1)
local tokens = reserve('tok', k)
local out, offset = { 'ok' }, 0
for i = 1, k do
  local count, part = tonumber(ARGV[8 + i]), {}
  for j = 1, count do part[j] = values[offset + j] end
  offset = offset + count
  local pid, ptok = id .. '.' .. i, b36(tokens + i - 1)
  redis.call('HSET', bKey(pid), 'key', f[1], 'sk', f[4], 'sq', f[5], 'enq', f[6], 'ord', num(ord + (i - 1) * span),
    'span', num(span), 'n', count, 'v', cmsgpack.pack(part), 'att', f[9], 'tok', ptok, 'lease', f[10], 'st', 'c', 'by', '')
  redis.call('ZADD', LEASE, f[10], pid)
  out[i + 1] = { pid, f[1], ptok, f[9], f[10], f[6], part }
end
finish()
return out
`;
