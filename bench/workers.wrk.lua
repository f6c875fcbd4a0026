-- wrk's script for BENCH_ONLY=workers (bench/workers.wrk.ts runs it): one load, statuses counted per thread, and
-- a done() that prints one JSON line (WRK_JSON …) the bench parses. Settings come from the environment:
--   WRK_LOAD      reads (GET /plants/{random stored id}), pages (GET /plants?limit=100) or creates (POST, new ids)
--   WRK_STORED    ids 1..WRK_STORED exist (reads)
--   WRK_ID_BASE   creates use WRK_ID_BASE + thread * 1e9 + n: unique across threads, and across runs that pass
--                 another base
--   WRK_TOKEN     the bearer token
--   WRK_RATE      paced: requests per second over all threads, 0 = a closed loop. Each thread hands out send
--                 times WRK_RATE/threads apart; a connection free to send takes the next one and waits for it, or
--                 sends at once when it is already past (all connections were busy): the rate offered is the
--                 target, or what the connections can carry when answers are slow (connections / latency)
--   WRK_HOLD_MS   paced: the first send time is WRK_HOLD_MS after the start, so the service accepts every
--                 connection while idle and the load meets accepted connections only
--   WRK_THREADS   wrk's -t
--   WRK_TIMED     1: each request carries its send time in X-Request-Id, which the service echoes on every answer
--                 (503s included), so each answer's latency is known by its status: the p99 and longest of the 2xx
--                 and of the 503s apart, where wrk's own histogram mixes them (0.1 ms buckets)
local load = os.getenv("WRK_LOAD") or "reads"
local stored = tonumber(os.getenv("WRK_STORED") or "1")
local base = tonumber(os.getenv("WRK_ID_BASE") or "0")
local token = os.getenv("WRK_TOKEN") or ""
local rate = tonumber(os.getenv("WRK_RATE") or "0")
local hold = tonumber(os.getenv("WRK_HOLD_MS") or "0")
local threadCount = tonumber(os.getenv("WRK_THREADS") or "1")
local timed = os.getenv("WRK_TIMED") == "1"

-- LuaJIT's ffi for a monotonic clock in ms (CLOCK_MONOTONIC = 1 on Linux); wrk gives its scripts none.
local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]])
local clockValue = ffi.new("bench_timespec")
local function nowMs()
  ffi.C.clock_gettime(1, clockValue)
  return tonumber(clockValue.tv_sec) * 1000 + tonumber(clockValue.tv_nsec) / 1e6
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end

function init(args)
  created = 0
  slots = 0
  firstSlotMs = nowMs() + hold
  c2xx = 0
  c503 = 0
  cother = 0
  sent = 0
  okTimes = {}
  shedTimes = {}
  math.randomseed(index * 7919 + os.time())
  getHeaders = { ["Authorization"] = "Bearer " .. token }
  postHeaders = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
end

local function stamped(headers)
  if timed then
    sent = sent + 1
    headers["X-Request-Id"] = string.format("bench-%d-%d-%.3f", index, sent, nowMs())
  end
  return headers
end

function request()
  if load == "creates" then
    created = created + 1
    local id = string.format("%.0f", base + index * 1e9 + created)
    return wrk.format("POST", "/plants", stamped(postHeaders), '{"id":' .. id .. ',"name":"Monstera ' .. id .. '","tag":"bench"}')
  elseif load == "pages" then
    return wrk.format("GET", "/plants?limit=100", stamped(getHeaders))
  end
  return wrk.format("GET", "/plants/" .. math.random(1, stored), stamped(getHeaders))
end

-- Defined only when pacing, so a closed loop pays no timer per request. wrk calls delay() before every request,
-- the first of each connection included.
if rate > 0 then
  local intervalMs = 1000 * threadCount / rate
  function delay()
    local due = firstSlotMs + slots * intervalMs
    slots = slots + 1
    local wait = due - nowMs()
    if wait <= 0 then
      return 0
    end
    return math.floor(wait)
  end
end

local function record(times, headers)
  local id = headers["X-Request-Id"] or headers["x-request-id"]
  local at = id and tonumber(string.match(id, "(%d+%.%d+)$"))
  if at then
    local key = math.floor((nowMs() - at) * 10)
    times[key] = (times[key] or 0) + 1
  end
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    c2xx = c2xx + 1
    if timed then record(okTimes, headers) end
  elseif status == 503 then
    c503 = c503 + 1
    if timed then record(shedTimes, headers) end
  else
    cother = cother + 1
  end
end

-- The p99 and the longest of a histogram merged over the threads, in ms (each bucket's upper edge); -1 if empty.
local function p99AndMax(name)
  local merged, keys, total = {}, {}, 0
  for _, thread in ipairs(threads) do
    for key, count in pairs(thread:get(name)) do
      if merged[key] == nil then table.insert(keys, key) end
      merged[key] = (merged[key] or 0) + count
      total = total + count
    end
  end
  if total == 0 then return -1, -1 end
  table.sort(keys)
  local seen, p99 = 0, nil
  for _, key in ipairs(keys) do
    seen = seen + merged[key]
    if p99 == nil and seen > total * 0.99 then p99 = (key + 1) / 10 end
  end
  return p99, (keys[#keys] + 1) / 10
end

function done(summary, latency, requests)
  local ok, shed, other = 0, 0, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("c2xx")
    shed = shed + thread:get("c503")
    other = other + thread:get("cother")
  end
  local okP99, okMax = p99AndMax("okTimes")
  local shedP99, shedMax = p99AndMax("shedTimes")
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"durationUs":%d,"requests":%d,"ok":%d,"shed":%d,"other":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,' ..
    '"p50Us":%d,"p99Us":%d,"maxUs":%d,"okP99Ms":%.1f,"okMaxMs":%.1f,"shedP99Ms":%.1f,"shedMaxMs":%.1f}\n',
    summary.duration, summary.requests, ok, shed, other, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, okP99, okMax, shedP99, shedMax))
end
