/**
 * The Lua scripts of `RedisDelayStore`: one pending job per id, claims with a token and a lease.
 * Each script is `DELAY_PRELUDE + body`, so every operation is one atomic unit on the server, and
 * each starts by returning expired leases (`reap()`), so a dead worker's jobs come back by
 * themselves whichever process touches the store next.
 *
 * Common KEYS / ARGV of every script:
 *   KEYS[1] D:due    zset: claimable pending jobs; score = dueAt, member = seq (14 hex digits) + id
 *   KEYS[2] D:wait   zset: pending jobs held back while their id is claimed; same scores and members
 *   KEYS[3] D:lease  zset: claimed ids; score = lease expiry
 *   KEYS[4] D:meta   hash: counters seq (schedule order) and tok (claim tokens)
 *   ARGV[1] now in ms, or '' to read the server's TIME
 *   ARGV[2…] the script's own arguments
 * (D = `{prefix}:dq`.) One hash per id, `D:j:<id>`, derived from KEYS[4] (same hash tag, same
 * cluster slot), holds the id's pending job (due, att, p, seq), its claim (tok, cdue, catt, cp,
 * cseq, cx = '1' once cancelled) and xt, the last token whose lease ran out. It is deleted once
 * it holds neither a pending job nor a claim.
 *
 * Wake-ups: a script that makes a job claimable at a time earlier than every other claimable
 * job's (a schedule, a retry, a job released by the end of a claim) PUBLISHes the milliseconds
 * until it on the channel `D:wake`, so idle DelayQueues of other processes read the next due time
 * again instead of polling. A new lease needs no announcement: every idle queue is already armed
 * no later than the due time of the job it covers, and reads the lease then.
 */
import { LUA_COMMON } from './lua-common.js';

const DELAY_PRELUDE = `
local DUE, WAIT, LEASE, META = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base = string.sub(META, 1, -5)
${LUA_COMMON}
local WAKE = base .. 'wake'

-- After a job was added to DUE at score at: announces it when it is (one of) the earliest there,
-- the only case in which the next due time of an idle DelayQueue can have become earlier.
local function announce(at)
  local head = redis.call('ZRANGE', DUE, 0, 0, 'WITHSCORES')
  if head[2] and tonumber(head[2]) >= tonumber(at) then
    redis.call('PUBLISH', WAKE, num(math.max(0, tonumber(at) - now)))
  end
end
local function jKey(id) return base .. 'j:' .. id end
local function member(seq, id) return string.format('%014x', tonumber(seq)) .. id end

-- Removes id's pending job (from whichever index holds it); whether there was one.
local function dropPending(id)
  local k = jKey(id)
  local f = redis.call('HMGET', k, 'due', 'seq')
  if not f[1] then return false end
  local m = member(f[2], id)
  redis.call('ZREM', DUE, m)
  redis.call('ZREM', WAIT, m)
  redis.call('HDEL', k, 'due', 'att', 'p', 'seq')
  return true
end

-- Ends id's claim. A pending job of the id (scheduled while it was claimed) becomes claimable
-- (announced if it is due first), remembering xt (a token whose lease ran out) if given; an id left with nothing is deleted.
local function endClaim(id, xt)
  local k = jKey(id)
  redis.call('ZREM', LEASE, id)
  redis.call('HDEL', k, 'tok', 'cdue', 'catt', 'cp', 'cseq', 'cx')
  local f = redis.call('HMGET', k, 'due', 'seq')
  if not f[1] then
    redis.call('DEL', k)
    return
  end
  local m = member(f[2], id)
  redis.call('ZREM', WAIT, m)
  redis.call('ZADD', DUE, f[1], m)
  announce(f[1])
  if xt then redis.call('HSET', k, 'xt', xt) end
end

-- 'ok' when tok is id's current claim, 'expired' when it is the claim whose lease last ran out,
-- else 'unknown' (settled, never claimed, or a stranger's token).
local function check(id, tok)
  local f = redis.call('HMGET', jKey(id), 'tok', 'xt')
  if f[1] == tok then return 'ok' end
  if f[2] == tok then return 'expired' end
  return 'unknown'
end

-- Returns the claims whose lease ran out (their worker died or stalled). The job is pending again,
-- at its old due time and schedule order, its lost run counted as an attempt; unless the id was
-- scheduled again meanwhile (that job stands) or cancelled (the job is dropped).
local function reap()
  for _, id in ipairs(redis.call('ZRANGE', LEASE, '-inf', num(now), 'BYSCORE')) do
    local k = jKey(id)
    local f = redis.call('HMGET', k, 'tok', 'cdue', 'catt', 'cp', 'cseq', 'cx', 'due')
    if not f[7] and f[6] ~= '1' then
      redis.call('HSET', k, 'due', f[2], 'att', tonumber(f[3]) + 1, 'p', f[4], 'seq', f[5])
    end
    endClaim(id, f[1])
  end
end
`;

/**
 * SCHEDULE: stores a job as the id's pending job, replacing the one there was; it is claimable
 * at once (announced on D:wake if it is due before every other claimable job), or after the id's
 * claim ends if the id is claimed.
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] id, [3] dueAt, [4] attempt, [5] payload (encoded).
 * Returns: 1.
 */
export const SCHEDULE_SCRIPT = `${DELAY_PRELUDE}
reap()
local id = ARGV[2]
local k = jKey(id)
dropPending(id)
local seq = redis.call('HINCRBY', META, 'seq', 1)
redis.call('HSET', k, 'due', ARGV[3], 'att', ARGV[4], 'p', ARGV[5], 'seq', seq)
if redis.call('HEXISTS', k, 'tok') == 1 then
  redis.call('ZADD', WAIT, ARGV[3], member(seq, id))
else
  redis.call('ZADD', DUE, ARGV[3], member(seq, id))
  announce(ARGV[3])
end
return 1
`;

/**
 * CANCEL: removes the id's pending job, and marks its claim (if any, in any process) cancelled:
 * a nack of that claim then drops the job instead of storing its retry, and so does the end of
 * its lease.
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] id.
 * Returns: 1 when a pending job was removed or a claim newly marked, else 0.
 */
export const CANCEL_SCRIPT = `${DELAY_PRELUDE}
reap()
local id = ARGV[2]
local k = jKey(id)
local had = dropPending(id)
local f = redis.call('HMGET', k, 'tok', 'cx')
if f[1] then
  if f[2] ~= '1' then
    redis.call('HSET', k, 'cx', '1')
    had = true
  end
elseif had then
  redis.call('DEL', k)
end
return had and 1 or 0
`;

/**
 * CLAIM: claims the pending jobs due by upTo, earliest due first, equal due times in schedule order.
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] upTo ('' = now), [3] limit, [4] leaseMs.
 * Returns: an array of {id, token, dueAt, attempt, payload}.
 */
export const CLAIM_SCRIPT = `${DELAY_PRELUDE}
reap()
local upTo = ARGV[2] == '' and num(now) or ARGV[2]
local picked = redis.call('ZRANGE', DUE, '-inf', upTo, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[3]))
if #picked == 0 then return {} end
local leaseAt = num(now + tonumber(ARGV[4]))
local tok0 = redis.call('HINCRBY', META, 'tok', #picked) - #picked
local out = {}
for i, m in ipairs(picked) do
  local id = string.sub(m, 15)
  local k = jKey(id)
  local f = redis.call('HMGET', k, 'due', 'att', 'p', 'seq')
  local tok = b36(tok0 + i)
  redis.call('ZREM', DUE, m)
  redis.call('HDEL', k, 'due', 'att', 'p', 'seq')
  redis.call('HSET', k, 'tok', tok, 'cdue', f[1], 'catt', f[2], 'cp', f[3], 'cseq', f[4])
  redis.call('ZADD', LEASE, leaseAt, id)
  out[i] = { id, tok, f[1], f[2], f[3] }
end
return out
`;

/**
 * ACK: removes a claimed job for good; a pending job of its id (scheduled while it was claimed)
 * becomes claimable.
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] id, [3] token.
 * Returns: 'ok', 'expired' (the token's lease ran out) or 'unknown'; only 'ok' changed anything.
 */
export const ACK_SCRIPT = `${DELAY_PRELUDE}
reap()
local id = ARGV[2]
local code = check(id, ARGV[3])
if code == 'ok' then endClaim(id, nil) end
return code
`;

/**
 * NACK: ends a claim and stores its retry as the id's pending job (announced as SCHEDULE's);
 * unless the id was scheduled again while claimed (that job stands) or cancelled (the job is
 * dropped).
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] id, [3] token, [4] the retry's dueAt, [5] its attempt, [6] its payload (encoded).
 * Returns: 'stored', 'dropped' (the claim ended, the retry was not stored), 'expired' or 'unknown'
 *   (see ACK: nothing changed).
 */
export const NACK_SCRIPT = `${DELAY_PRELUDE}
reap()
local id = ARGV[2]
local code = check(id, ARGV[3])
if code ~= 'ok' then return code end
local k = jKey(id)
local f = redis.call('HMGET', k, 'due', 'cx')
if f[1] or f[2] == '1' then
  endClaim(id, nil)
  return 'dropped'
end
local seq = redis.call('HINCRBY', META, 'seq', 1)
redis.call('HSET', k, 'due', ARGV[4], 'att', ARGV[5], 'p', ARGV[6], 'seq', seq)
endClaim(id, nil)
return 'stored'
`;

/**
 * EXTEND: moves the leases of claims still held to now + leaseMs.
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now, [2] leaseMs, [3] n, then n pairs: id, token.
 * Returns: one code per pair, as ACK's; only 'ok' leases moved.
 */
export const EXTEND_SCRIPT = `${DELAY_PRELUDE}
reap()
local leaseAt = num(now + tonumber(ARGV[2]))
local out = {}
for i = 1, tonumber(ARGV[3]) do
  local id = ARGV[2 + i * 2]
  local code = check(id, ARGV[3 + i * 2])
  if code == 'ok' then redis.call('ZADD', LEASE, 'XX', leaseAt, id) end
  out[i] = code
end
return out
`;

/**
 * NEXT_DUE: when the next pending job is due, and when the next lease runs out (its job may then
 * be claimed again, or a job waiting behind it becomes claimable).
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now.
 * Returns: {now, dueAt, leaseAt} as strings; '' for none.
 */
export const NEXT_DUE_SCRIPT = `${DELAY_PRELUDE}
reap()
local d = redis.call('ZRANGE', DUE, 0, 0, 'WITHSCORES')
local l = redis.call('ZRANGE', LEASE, 0, 0, 'WITHSCORES')
return { num(now), d[2] or '', l[2] or '' }
`;

/**
 * SIZE: jobs held, pending plus claimed (an id with a claim and a pending job counts twice).
 *
 * KEYS: the prelude's four.
 * ARGV: [1] now.
 * Returns: the count.
 */
export const SIZE_SCRIPT = `${DELAY_PRELUDE}
reap()
return redis.call('ZCARD', DUE) + redis.call('ZCARD', WAIT) + redis.call('ZCARD', LEASE)
`;
