/** Scripts that read the queue or remove a key: counts, next due time, entries, remove. */
import { PRELUDE } from './prelude.js';

/**
 * COUNTS: what the shard holds, after returning expired leases.
 *
 * KEYS: the prelude's four.   ARGV: the prelude's five.
 * Returns: {pending, claimed, keys} (values waiting, values claimed, keys with values waiting).
 */
export const COUNTS_SCRIPT = `${PRELUDE}
reap()
finish()
local m = redis.call('HMGET', META, 'pending', 'claimed', 'keys')
return { tonumber(m[1]) or 0, tonumber(m[2]) or 0, tonumber(m[3]) or 0 }
`;

/**
 * NEXT_DUE: when something in the shard is next claimable: the head key's due time (a time queue),
 * or now when a key is claimable (a sorted queue), or when the next deferred key or lease comes back.
 *
 * KEYS: the prelude's four.   ARGV: the prelude's five.
 * Returns: {now, dueAt} as strings, dueAt '' when the shard holds nothing that will become claimable.
 */
export const NEXT_DUE_SCRIPT = `${PRELUDE}
reap()
finish()
local at = nil
local function consider(z)
  local head = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
  if head[2] ~= nil then
    local t = tonumber(head[2])
    if at == nil or t < at then at = t end
  end
end
if timed then consider(READY) elseif redis.call('ZCARD', READY) > 0 then at = now end
consider(DEFER)
consider(LEASE)
return { num(now), at and num(at) or '' }
`;

/**
 * ENTRIES: the claimable keys in place order, with their place and pending values (returned
 * batches' values first), for peek() and inspection. O(values of the keys listed).
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] limit (-1: every key).
 * Returns: an array of {key, sortKey, seq, {values}}.
 */
export const ENTRIES_SCRIPT = `${PRELUDE}
reap()
finish()
local limit = tonumber(ARGV[6])
local out = {}
local page = redis.call('ZRANGE', READY, 0, limit < 0 and -1 or limit - 1, 'WITHSCORES')
for i = 1, #page, 2 do
  local key = string.sub(page[i], 15)
  local values = {}
  for _, id in ipairs(redis.call('ZRANGE', rKey(key), 0, -1)) do
    for _, v in ipairs(cmsgpack.unpack(redis.call('HGET', bKey(id), 'v'))) do values[#values + 1] = v end
  end
  for _, v in ipairs(redis.call('LRANGE', vKey(key), 0, -1)) do values[#values + 1] = v end
  out[#out + 1] = { key, page[i + 1], tostring(tonumber(string.sub(page[i], 1, 14), 16)), values }
end
return out
`;

/**
 * REMOVE: removes a key's pending values (returned batches and fresh values; claimed ones stay
 * claimed). Like the in-memory remove, it does not return expired leases first.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] key.
 * Returns: the removed values, oldest first.
 */
export const REMOVE_SCRIPT = `${PRELUDE}
local key = ARGV[6]
if redis.call('EXISTS', sKey(key)) == 0 then return {} end
local st = load(key)
unplace(st)
local out = {}
for _, id in ipairs(redis.call('ZRANGE', rKey(key), 0, -1)) do
  for _, v in ipairs(cmsgpack.unpack(redis.call('HGET', bKey(id), 'v'))) do out[#out + 1] = v end
  redis.call('DEL', bKey(id))
end
redis.call('DEL', rKey(key))
if st.n > 0 then
  for _, v in ipairs(redis.call('LPOP', vKey(key), st.n)) do out[#out + 1] = v end
end
st.n, st.rc, st.nb = 0, 0, 0
dPending = dPending - #out
place(st)
finish()
return out
`;

/**
 * RESUME: makes a key deferred by a nack claimable now.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then [6] key.
 * Returns: 1 when the key was deferred, 0 when not (nothing changed).
 */
export const RESUME_SCRIPT = `${PRELUDE}
local key = ARGV[6]
local nb = tonumber(redis.call('HGET', sKey(key), 'nb'))
if nb == nil or nb == 0 then return 0 end
local st = load(key)
unplace(st)
st.nb = 0
place(st)
finish()
return 1
`;
