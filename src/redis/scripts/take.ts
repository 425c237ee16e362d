/** The take script: claim or pull batches of one shard in place order. */
import { PRELUDE } from './prelude.js';

/**
 * TAKE: the in-memory `claim` / `pull`: keys in place order (sort key, then seq), one batch per
 * key: a returned batch whole (same id), else up to maxBatchSize fresh values; stop at the first
 * batch that does not fit, except that a head batch larger than the bound gives its first values.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then
 *   [6] 'claim' or 'pull'   [7] maxMessages (-1: no bound)
 *   [8] upTo: a sort key, 'now' (the time queue: due keys only) or '' (no bound)
 *   [9] maxBatchSize (-1: no bound)   [10] leaseMs (claim)
 *   [11] '1' when a head batch larger than maxMessages may be cut, '0' when it stops the take
 *   [12] maxBatches (-1: no bound)   [13] '1' to take keys deferred by a nack as if their delay had run out
 * Returns: claim: an array of batches {id, key, token, attempt, leaseExpiresAt, enqueuedAt, {values}};
 *   pull: an array of {key, {values}}.
 */
export const TAKE_SCRIPT = `${PRELUDE}
local mode, max, upTo, maxBatch = ARGV[6], tonumber(ARGV[7]), ARGV[8], tonumber(ARGV[9])
local leaseMs, partial = tonumber(ARGV[10]), ARGV[11] == '1'
local maxBatches, undefer = tonumber(ARGV[12]), ARGV[13] == '1'
local claiming = mode == 'claim'
if undefer then
  for _, key in ipairs(redis.call('ZRANGE', DEFER, 0, -1)) do
    local st = load(key)
    unplace(st)
    st.nb = 0
    place(st)
  end
end
reap()
local remaining = max < 0 and math.huge or max
local upper = '+inf'
if upTo == 'now' then upper = num(now) elseif upTo ~= '' then upper = upTo end

-- Choose first: keys move in the index as they are taken.
local picks, offset, done = {}, 0, false
while not done do
  local page = redis.call('ZRANGE', READY, '-inf', upper, 'BYSCORE', 'LIMIT', offset, 100)
  offset = offset + #page
  for _, m in ipairs(page) do
    local st = load(string.sub(m, 15))
    local count
    if st.rc > 0 then
      st.rid = redis.call('ZRANGE', rKey(st.key), 0, 0)[1]
      count = tonumber(redis.call('HGET', bKey(st.rid), 'n'))
    else
      count = st.n
      if maxBatch >= 0 and count > maxBatch then count = maxBatch end
    end
    if count <= remaining then
      picks[#picks + 1] = { st, count }
      remaining = remaining - count
      if remaining == 0 or #picks == maxBatches then done = true break end
    else
      if #picks == 0 and partial then picks[1] = { st, remaining } end
      done = true
      break
    end
  end
  if #page < 100 then done = true end
end
if #picks == 0 then return {} end

-- The first 'count' fresh values of the key, removed from it. Its place stays.
local function takeFresh(st, count)
  local values = redis.call('LPOP', vKey(st.key), count)
  st.n = st.n - count
  return values
end

-- The key's first returned batch, cut to its first 'count' values if it has more (the rest stays
-- returned, under a new id, just behind it, in the second half of the batch's order span).
-- Returns the batch id and its values.
local function takeReturned(st, count)
  local id = st.rid
  local f = redis.call('HMGET', bKey(id), 'n', 'v', 'ord', 'span')
  local n, values = tonumber(f[1]), cmsgpack.unpack(f[2])
  redis.call('ZREM', rKey(st.key), id)
  if count < n then
    local head, rest = {}, {}
    for i = 1, n do if i <= count then head[i] = values[i] else rest[i - count] = values[i] end end
    local span = tonumber(f[4]) / 2
    local rid = newId(reserve('id', 1))
    local g = redis.call('HMGET', bKey(id), 'sk', 'sq', 'enq')
    redis.call('HSET', bKey(rid), 'key', st.key, 'sk', g[1], 'sq', g[2], 'enq', g[3], 'ord', num(tonumber(f[3]) + span),
      'span', num(span), 'n', n - count, 'v', cmsgpack.pack(rest), 'att', 0, 'tok', '', 'lease', 0, 'st', 'r', 'by', 'nack')
    redis.call('ZADD', rKey(st.key), num(tonumber(f[3]) + span), rid)
    -- The head keeps the first half of the order span, so its parts (if split) stay ahead of the rest.
    redis.call('HSET', bKey(id), 'n', count, 'v', cmsgpack.pack(head), 'span', num(span))
    values = head
  end
  st.rc = st.rc - count
  recompute(st)
  return id, values
end

local out = {}
local leaseAt = now + leaseMs
local ids, tokens, orders = 0, 0, 0
if claiming then
  ids, tokens, orders = reserve('id', #picks), reserve('tok', #picks), reserve('ord', #picks)
end
for i, p in ipairs(picks) do
  local st, count = p[1], p[2]
  unplace(st)
  local id, values = nil, nil
  if st.rc > 0 then id, values = takeReturned(st, count) end
  if not claiming then
    if id ~= nil then redis.call('DEL', bKey(id)) else values = takeFresh(st, count) end
    out[i] = { st.key, values }
  else
    local tok = b36(tokens + i - 1)
    if id == nil then
      values = takeFresh(st, count)
      id = newId(ids + i - 1)
      redis.call('HSET', bKey(id), 'key', st.key, 'sk', num(st.pk), 'sq', st.ps, 'enq', num(st.since),
        'ord', orders + i - 1, 'span', 1, 'n', count, 'v', cmsgpack.pack(values), 'att', 1, 'tok', tok,
        'lease', num(leaseAt), 'st', 'c', 'by', '')
      out[i] = { id, st.key, tok, '1', num(leaseAt), num(st.since), values }
    else
      local att = redis.call('HINCRBY', bKey(id), 'att', 1)
      redis.call('HSET', bKey(id), 'tok', tok, 'lease', num(leaseAt), 'st', 'c', 'by', '')
      out[i] = { id, st.key, tok, tostring(att), num(leaseAt), redis.call('HGET', bKey(id), 'enq'), values }
    end
    redis.call('ZADD', LEASE, num(leaseAt), id)
    st.c = st.c + 1
    dClaimed = dClaimed + count
  end
  dPending = dPending - count
  place(st)
end
if claiming then wake(leaseAt) end
finish()
return out
`;
