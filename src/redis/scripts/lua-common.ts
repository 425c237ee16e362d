/**
 * Lua shared by the queue scripts and the delay-store scripts, spliced into both preludes:
 * the clock (ARGV[1] in ms, or '' to read the server's TIME), `num` (a number as %.17g, which
 * round-trips every double) and `b36` (a whole number in base 36, for batch ids and tokens).
 */
export const LUA_COMMON = `
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local function num(x) return string.format('%.17g', x) end

local function b36(n)
  local digits, s = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  n = math.floor(n)
  repeat
    local d = n % 36
    s = string.sub(digits, d + 1, d + 1) .. s
    n = (n - d) / 36
  until n == 0
  return s
end
`;
