-- wrk script of scripts/bench-table.sh: GET with a bearer token. Usage: ... -s auth.lua URL -- TOKEN
function init(args)
    if args[1] then wrk.headers["Authorization"] = "Bearer " .. args[1] end
end
