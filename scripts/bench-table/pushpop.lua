-- wrk script of scripts/bench-table.sh: push and pop alternating on the sessions of SESSIONS_FILE
-- ("id token" per line). Usage: wrk ... -s pushpop.lua URL -- SESSIONS_FILE THREADS
-- Each wrk thread owns every THREADS-th session and walks them in turn: push on one, pop on it,
-- then the next. Every session was given five screens above its root beforehand, so a pop that
-- overtakes its push on another connection, or follows a push cut off when an earlier run
-- stopped, still finds a screen to pop (never a 409).
-- Requests are formatted once, in init, so wrk spends little of the shared CPU on Lua.
local counter = 1
local threads = 0

function setup(thread)
    thread:set("index", threads)
    threads = threads + 1
end

function init(args)
    checked = index ~= 0
    local count = tonumber(args[2])
    local push = '{"name":"Detail","values":{"title":"x"}}'
    local pop = '{"count":1}'
    requests = {}
    local line_number = 0
    for line in io.lines(args[1]) do
        if line_number % count == index then
            local id, token = line:match("(%S+) (%S+)")
            local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
            requests[#requests + 1] = wrk.format("POST", "/v1/sessions/" .. id .. "/push", headers, push)
            requests[#requests + 1] = wrk.format("POST", "/v1/sessions/" .. id .. "/pop", headers, pop)
        end
        line_number = line_number + 1
    end
end

-- wrk calls request() once on its first thread to check what it returns, and never sends that
-- one: it must not advance, or that thread's first pop would go out without its push.
function request()
    local next = requests[counter]
    if checked then
        counter = counter % #requests + 1
    end
    checked = true
    return next
end
