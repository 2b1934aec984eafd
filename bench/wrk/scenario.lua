-- One load scenario for wrk, described by environment variables set by bench/load.py:
--   BENCH_METHOD, BENCH_PATH, BENCH_BODY_FILE (optional), BENCH_HEADERS ("Name: value" lines),
--   BENCH_NEW_PHONE=1 to give every request a fresh phone number (POST /api/contacts),
--   BENCH_PHONE_BASE, a number that differs between runs so numbers never repeat,
--   BENCH_SIGNED_FILE: lines "signature<TAB>body", sent in turn with X-Hub-Signature-256
--   (wrk's Lua has no HMAC, so the scenarios sign the webhook deliveries beforehand),
--   BENCH_RATE: requests per second to send on a fixed schedule (an open loop), instead of
--   each connection sending its next request as soon as the last one is answered.
-- done() prints one JSON line with the counts, errors and the whole latency histogram,
-- so bench/load.py can merge several runs into exact percentiles.

local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local new_phone = os.getenv("BENCH_NEW_PHONE") == "1"
local phone_base = tonumber(os.getenv("BENCH_PHONE_BASE") or "0")
local headers = {}
for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  headers[name] = value
end
local body = nil
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local file = assert(io.open(body_file, "rb"))
  body = file:read("*a")
  file:close()
end

local signed = {}
local signed_file = os.getenv("BENCH_SIGNED_FILE")
if signed_file and signed_file ~= "" then
  for line in io.lines(signed_file) do
    local signature, payload = string.match(line, "^([^\t]+)\t(.*)$")
    table.insert(signed, {signature, payload})
  end
end

local threads = {}
function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

-- Globals, so done() can read them from each thread.
sent = 0
late = 0

-- The open loop: request k is due at start + k / rate, whichever connection is free. A
-- request sent more than 5 ms after its time is counted late: the connections (or the
-- client) could not keep the schedule, and the run does not measure the rate it claims.
local rate = tonumber(os.getenv("BENCH_RATE") or "0")
if rate > 0 then
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *now);
  ]]
  local now = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(1, now)  -- CLOCK_MONOTONIC
    return tonumber(now.tv_sec) * 1000 + tonumber(now.tv_nsec) / 1e6
  end
  local interval = 1000 / rate
  local next_slot = nil
  function delay()
    local current = now_ms()
    next_slot = next_slot or current
    local wait = next_slot - current
    next_slot = next_slot + interval
    if wait < -5 then
      late = late + 1
    end
    return math.max(0, math.floor(wait + 0.5))
  end
end

local counter = 0
function request()
  sent = sent + 1
  if #signed > 0 then
    counter = counter + 1
    local item = signed[1 + (thread_id * 7 + counter) % #signed]
    headers["X-Hub-Signature-256"] = item[1]
    return wrk.format(method, path, headers, item[2])
  end
  if new_phone then
    counter = counter + 1
    -- A possible UK mobile number: 447 and nine digits.
    local number = phone_base + thread_id * 10000000 + counter
    local payload = string.format(
      '{"first_name": "Bench", "last_name": "Load", "phone": "+447%09d", "email": "bench@example.com"}',
      number % 1000000000)
    return wrk.format(method, path, headers, payload)
  end
  return wrk.format(method, path, headers, body)
end

function done(summary, latency, requests)
  local total_sent, total_late = 0, 0
  for _, thread in ipairs(threads) do
    total_sent = total_sent + (thread:get("sent") or 0)
    total_late = total_late + (thread:get("late") or 0)
  end
  local histogram = {}
  for i = 1, #latency do
    local value, count = latency(i)
    histogram[i] = string.format("[%d,%d]", value, count)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "sent": %d, "late": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"histogram_us": [%s]}\n',
    summary.requests, summary.duration, total_sent, total_late, e.connect, e.read, e.write,
    e.status, e.timeout, table.concat(histogram, ",")))
end
