/**
 * The Lua every script of a shard starts with: the shard's key names, the clock, the key-state
 * and batch helpers, the lease/deferral reaper and the end-of-script bookkeeping. A script is
 * `PRELUDE + body`, so each one runs as a single atomic unit on the server.
 *
 * Common KEYS / ARGV of every script:
 *   KEYS[1] T:meta   KEYS[2] T:ready   KEYS[3] T:defer   KEYS[4] T:lease   (T = the shard's hash tag)
 *   ARGV[1] now in ms, or '' to read the server's TIME
 *   ARGV[2] perKeyOrder: '1' or '0'
 *   ARGV[3] shard index (the first part of the batch ids this shard makes)
 *   ARGV[4] 's' (sorted queue: a placed key is due now) or 't' (time queue: due at its sort key)
 *   ARGV[5] pub/sub channel to announce new due times on, or '' for none
 *   ARGV[6…] the script's own arguments
 *
 * Per-key keys (`T:s:<key>`, `T:v:<key>`, `T:r:<key>`, `T:b:<id>`) are derived from KEYS[1]:
 * they share its hash tag, so they live in the same cluster slot.
 *
 * The key state hash `T:s:<key>` holds: c (claims outstanding), rc (values in returned batches),
 * nb (not claimable before; 0 = no deferral), fk/fs (fresh values' place: sort key and seq),
 * pk/ps (the key's place: the least of the fresh place and the returned batches' places),
 * w (0 = in no index, 1 = ready, 2 = deferred), since (publish time of the oldest fresh value).
 * Numbers cross into Lua as strings and back with %.17g, which round-trips every double.
 */
import { LUA_COMMON } from './lua-common.js';
export const PRELUDE = `
local META, READY, DEFER, LEASE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base = string.sub(META, 1, -5)
${LUA_COMMON}local perKeyOrder = ARGV[2] == '1'
local shard = ARGV[3]
local timed = ARGV[4] == 't'
local channel = ARGV[5]
local dPending, dClaimed, dKeys = 0, 0, 0
local wakeAt = nil

local function sKey(key) return base .. 's:' .. key end
local function vKey(key) return base .. 'v:' .. key end
local function rKey(key) return base .. 'r:' .. key end
local function bKey(id) return base .. 'b:' .. id end
local function member(seq, key) return string.format('%014x', seq) .. key end
local function wake(at) if wakeAt == nil or at < wakeAt then wakeAt = at end end

local epoch = nil
-- Reserves 'count' numbers of counter 'field'; returns the first.
local function reserve(field, count)
  return redis.call('HINCRBY', META, field, count) - count + 1
end
local function newId(n)
  if epoch == nil then
    epoch = redis.call('HGET', META, 'ep')
    if not epoch then
      local t = redis.call('TIME')
      epoch = b36(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
      redis.call('HSET', META, 'ep', epoch)
    end
  end
  return shard .. '-' .. epoch .. '-' .. b36(n)
end

local function load(key)
  local f = redis.call('HMGET', sKey(key), 'c', 'rc', 'nb', 'fk', 'fs', 'pk', 'ps', 'w', 'since')
  local st = { key = key, c = tonumber(f[1]) or 0, rc = tonumber(f[2]) or 0, nb = tonumber(f[3]) or 0,
    fk = tonumber(f[4]), fs = tonumber(f[5]), pk = tonumber(f[6]), ps = tonumber(f[7]), w = tonumber(f[8]) or 0,
    since = tonumber(f[9]) or 0, n = redis.call('LLEN', vKey(key)) }
  st.had = st.n + st.rc > 0
  return st
end

local function unplace(st)
  st.ow, st.opk, st.ops = st.w, st.pk, st.ps
  if st.w == 1 then redis.call('ZREM', READY, member(st.ps, st.key))
  elseif st.w == 2 then redis.call('ZREM', DEFER, st.key) end
  st.w = 0
end

-- Files the key where it now belongs (ready, deferred or nowhere) and saves its state.
local function place(st)
  local pending = st.n + st.rc
  if pending > 0 and not st.had then dKeys = dKeys + 1 elseif pending == 0 and st.had then dKeys = dKeys - 1 end
  st.had = pending > 0
  if pending == 0 then
    if st.c == 0 then redis.call('DEL', sKey(st.key)) return end
  elseif perKeyOrder and st.c > 0 then
    -- held back until the key's claims are settled
  elseif st.nb > 0 and st.nb > now then
    st.w = 2
    redis.call('ZADD', DEFER, st.nb, st.key)
    if st.ow ~= 2 then wake(st.nb) end
  else
    st.nb, st.w = 0, 1
    redis.call('ZADD', READY, st.pk, member(st.ps, st.key))
    if st.ow ~= 1 or st.pk < st.opk or (st.pk == st.opk and st.ps < st.ops) then wake(timed and st.pk or now) end
  end
  redis.call('HSET', sKey(st.key), 'c', st.c, 'rc', st.rc, 'nb', st.nb, 'fk', st.fk or '', 'fs', st.fs or '',
    'pk', st.pk or '', 'ps', st.ps or '', 'w', st.w, 'since', st.since)
end

-- The key's place: the least of its fresh values' place and its returned batches' places.
local function recompute(st)
  if st.rc == 0 then
    if st.fk ~= nil then st.pk, st.ps = st.fk, st.fs end
    return
  end
  local bk, bs = nil, nil
  if st.n > 0 then bk, bs = st.fk, st.fs end
  for _, id in ipairs(redis.call('ZRANGE', rKey(st.key), 0, -1)) do
    local f = redis.call('HMGET', bKey(id), 'sk', 'sq')
    local k, s = tonumber(f[1]), tonumber(f[2])
    if bk == nil or k < bk or (k == bk and s < bs) then bk, bs = k, s end
  end
  if bk ~= nil then st.pk, st.ps = bk, bs end
end

local function hasToken(list, tok)
  return list ~= nil and list ~= false and string.find(',' .. list .. ',', ',' .. tok .. ',', 1, true) ~= nil
end

-- 'ok' when batch id may be settled with token tok ('' = the current claim), else why not.
local function resolve(id, tok)
  local f = redis.call('HMGET', bKey(id), 'st', 'by', 'tok', 'xt')
  if not f[1] then return 'unknown' end
  if f[1] == 'r' then
    -- A token whose lease ran out is stale whatever happened since (a later claim may have nacked the batch).
    if (tok ~= '' and hasToken(f[4], tok)) or (tok == '' and f[2] == 'expired') then return 'expired' end
    return 'unknown'
  end
  if tok ~= '' and tok ~= f[3] then
    if hasToken(f[4], tok) then return 'expired' end
    return 'unknown'
  end
  return 'ok'
end

-- Puts claimed batch id back in front of its key (at the place the key had when claimed).
local function giveBack(id, reason, notBefore)
  local f = redis.call('HMGET', bKey(id), 'key', 'n', 'ord', 'tok', 'xt')
  local key, n = f[1], tonumber(f[2])
  redis.call('ZREM', LEASE, id)
  if reason == 'expired' then
    local xt = f[4]
    if f[5] and f[5] ~= '' then xt = f[5] .. ',' .. f[4] end
    redis.call('HSET', bKey(id), 'st', 'r', 'by', reason, 'xt', xt)
  else
    redis.call('HSET', bKey(id), 'st', 'r', 'by', reason)
  end
  local st = load(key)
  unplace(st)
  redis.call('ZADD', rKey(key), f[3], id)
  st.rc, st.c = st.rc + n, st.c - 1
  if notBefore > st.nb then st.nb = notBefore end
  recompute(st)
  place(st)
  dClaimed, dPending = dClaimed - n, dPending + n
end

-- Returns expired leases to their keys and lets deferred keys whose time came be claimed.
local function reap()
  for _, id in ipairs(redis.call('ZRANGE', LEASE, '-inf', num(now), 'BYSCORE')) do giveBack(id, 'expired', 0) end
  for _, key in ipairs(redis.call('ZRANGE', DEFER, '-inf', num(now), 'BYSCORE')) do
    local st = load(key)
    unplace(st)
    st.nb = 0
    place(st)
  end
end

-- A claimed batch as the client reads it: id, key, token, attempt, lease expiry, enqueuedAt, values.
local function batchReply(id)
  local f = redis.call('HMGET', bKey(id), 'key', 'tok', 'att', 'lease', 'enq', 'v')
  return { id, f[1], f[2], f[3], f[4], f[5], cmsgpack.unpack(f[6]) }
end

local function finish()
  if dPending ~= 0 then redis.call('HINCRBY', META, 'pending', dPending) end
  if dClaimed ~= 0 then redis.call('HINCRBY', META, 'claimed', dClaimed) end
  if dKeys ~= 0 then redis.call('HINCRBY', META, 'keys', dKeys) end
  if wakeAt ~= nil and channel ~= '' then redis.call('PUBLISH', channel, num(math.max(0, wakeAt - now))) end
end
`;
