-- One load scenario for wrk, described by environment variables set by bench/run.py:
--   BENCH_METHOD, BENCH_PATH, BENCH_BODY_FILE (optional), BENCH_HEADERS ("Name: value" lines),
--   BENCH_NEW_PHONE=1 to give every request a fresh phone number (POST /api/contacts),
--   BENCH_PHONE_BASE, a number that differs between runs so numbers never repeat,
--   BENCH_SIGNED_FILE: lines "signature<TAB>body", sent in turn with X-Hub-Signature-256
--   (wrk's Lua has no HMAC, so bench/run.py signs the webhook deliveries beforehand).
-- done() prints one JSON line with throughput, latency percentiles and errors.

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

local thread_count = 0
function setup(thread)
  thread:set("thread_id", thread_count)
  thread_count = thread_count + 1
end

local counter = 0
function request()
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
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "max_us": %d, "mean_us": %.1f, "errors": {"connect": %d, "read": %d, ' ..
    '"write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status,
    e.timeout))
end
