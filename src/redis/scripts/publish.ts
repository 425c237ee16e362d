/** The publish script: many publishes of one tick, grouped per key, in one atomic call. */
import { PRELUDE } from './prelude.js';

/**
 * PUBLISH: appends values to keys' fresh values and places keys, as the in-memory `add` does
 * for each value in turn.
 *
 * KEYS: the prelude's four.
 * ARGV: the prelude's five, then
 *   [6] maxPending (-1: no bound)   [7] maxBatchSize (-1: no bound)   [8] lingerMs (time queue)
 *   [9] n, the number of publishes, then n triples: sort key ('' in a time queue), key, encoded value.
 * Returns: how many publishes were stored, from the first: the rest would have taken the queue past
 *   maxPending and were not stored (the caller fails them with QueueFullError).
 *
 * Values of one key are appended with variadic RPUSH. A key's fresh place is set by its first value
 * (when it had none) and lowered by a strictly smaller sort key; seqs are reserved once per call,
 * so ties between keys stay in publish order. In a time queue the sort key is now + lingerMs, and
 * a key holding maxBatchSize fresh values is due now.
 */
export const PUBLISH_SCRIPT = `${PRELUDE}
local maxPending, maxBatch, linger, count = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local accepted = count
if maxPending >= 0 then
  local m = redis.call('HMGET', META, 'pending', 'claimed')
  accepted = math.max(0, math.min(count, maxPending - (tonumber(m[1]) or 0) - (tonumber(m[2]) or 0)))
end
if accepted == 0 then return 0 end
local seq0 = reserve('seq', accepted)
-- A time queue's values are placed at now + lingerMs. While no publish has used a longer linger
-- than this one, a key's fresh place (set at an earlier now, with a linger no longer) cannot be
-- later than now + lingerMs, so it never moves and need not be read. (Server time is taken as
-- monotonic: a backward step of the server clock may leave a place later by at most the step.)
local settled = false
if timed then
  local longest = tonumber(redis.call('HGET', META, 'linger')) or -1
  if linger > longest then redis.call('HSET', META, 'linger', linger) end
  settled = linger >= longest
end
local keys, groups = {}, {}
for i = 1, accepted do
  local at = 7 + i * 3
  local key = ARGV[at + 1]
  local sk = timed and (now + linger) or tonumber(ARGV[at])
  local g = groups[key]
  if g == nil then
    g = { values = {}, sk = sk, seq = seq0 + i - 1 }
    groups[key] = g
    keys[#keys + 1] = key
  elseif sk < g.sk then
    g.sk, g.seq = sk, seq0 + i - 1
  end
  g.values[#g.values + 1] = ARGV[at + 2]
end
for _, key in ipairs(keys) do
  local g = groups[key]
  local values = g.values
  local n
  for i = 1, #values, 4000 do n = redis.call('RPUSH', vKey(key), unpack(values, i, math.min(i + 3999, #values))) end
  dPending = dPending + #values
  local before = n - #values
  -- Fast path: the key had fresh values and its place does not move; only the values were appended.
  local full = before == 0
  if not full then
    if settled then
      full = maxBatch >= 0 and n >= maxBatch
    else
      local fk = tonumber(redis.call('HGET', sKey(key), 'fk'))
      full = fk == nil or g.sk < fk or (timed and maxBatch >= 0 and n >= maxBatch and now < fk)
    end
  end
  if full then
    local st = load(key)
    st.had = before + st.rc > 0
    if before == 0 then
      st.fk, st.fs, st.since = g.sk, g.seq, now
    elseif g.sk < st.fk then
      st.fk, st.fs = g.sk, g.seq
    end
    if timed and maxBatch >= 0 and st.n >= maxBatch and now < st.fk then st.fk = now end
    unplace(st)
    recompute(st)
    place(st)
  end
end
finish()
return accepted
`;
