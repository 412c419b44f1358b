-- Wireshark dissector for KRP/1, the Kenaf robot's UDP protocol
-- (docs/protocol.md): every field of every message type with
-- its name and unit, ERROR codes, STATUS and capability flags, and expert
-- info for every envelope fault the robot answers with ERROR.
--
--   tshark -X lua_script:tools/wireshark/krp.lua -r capture.pcapng -V
--   wireshark -X lua_script:tools/wireshark/krp.lua capture.pcapng
--
-- or copy it into ~/.local/lib/wireshark/plugins/. UDP port 9750 is
-- decoded as KRP/1 (preference "krp.udp_port"); datagrams on other ports
-- are recognised by their header ("KN", version 1, a length that fits)
-- unless the preference "krp.heuristic" is off.

local krp = Proto("krp", "Kenaf Robot Protocol (KRP/1)")

local HDR_LEN = 12
local MAX_DGRAM = 512

local types = {
    [0x01] = "HELLO", [0x02] = "CRAWLER", [0x03] = "FLIPPER", [0x04] = "STOP",
    [0x05] = "STATUS_REQ", [0x06] = "SUBSCRIBE", [0x07] = "ESTOP", [0x08] = "WORLD_REQ",
    [0x09] = "BYE", [0x0A] = "STEP", [0x0B] = "ESTOP_INFO_REQ", [0x0C] = "TRIAL_REQ",
    [0x80] = "ACK", [0x81] = "HELLO_ACK", [0x85] = "STATUS", [0x86] = "WORLD",
    [0x87] = "ESTOP_INFO", [0x88] = "TRIAL", [0xFF] = "ERROR",
}
local payload_len = {
    [0x01] = 16, [0x02] = 8, [0x03] = 20, [0x04] = 0, [0x05] = 0, [0x06] = 2, [0x07] = 1,
    [0x08] = 4, [0x09] = 0, [0x0A] = 4, [0x0B] = 0, [0x0C] = 4, [0x80] = 8, [0x81] = 40,
    [0x85] = 112, [0x86] = 8, [0x87] = 4, [0x88] = 72, [0xFF] = 8,
}
-- WORLD (the world description extension) carries 8 fixed bytes and then a
-- chunk of 0 to 480 bytes of the description; ESTOP_INFO (the e-stop info
-- extension) 4 fixed bytes and then 0 to 20 entries of 24 bytes.
local WORLD_CHUNK_MAX = 480
local ESTOP_ENTRY_LEN, ESTOP_ENTRIES_MAX = 24, 20
local engager_kinds = { [1] = "plain", [2] = "session", [3] = "console", [4] = "admin" }
local error_codes = {
    [2] = "BAD_VERSION", [3] = "BAD_LENGTH", [4] = "UNKNOWN_TYPE", [5] = "RANGE",
    [6] = "ESTOP", [7] = "BACKEND_DOWN", [8] = "BUSY", [9] = "NOT_OWNER", [10] = "BAD_SESSION",
    [11] = "NO_MODEL", [12] = "NO_ACTUATOR", [64] = "NOT_ALLOWED", [65] = "NO_TRIAL",
}
local error_text = {
    [2] = "version is not 1", [3] = "length wrong (header, payload or datagram size)",
    [4] = "type unknown or not for the robot", [5] = "set-point out of range, clamped",
    [6] = "refused: emergency stop engaged", [7] = "simulator link down (command stored)",
    [8] = "too many subscribers",
    [9] = "refused: another client drives, or holds the e-stop",
    [10] = "refused: session token missing, unknown or stale",
    [11] = "the robot's model is not in the simulator's world (command stored)",
    [12] = "refused: nothing in the simulator acts on this command",
    [64] = "refused: this address may only observe",
    [65] = "the robot runs no trial",
}
-- Sessions extension: header flags, the 4-byte token after a controller's
-- payload (TOKEN), and the 48-byte HELLO_ACK with role and token.
local FLAG_SESSION, FLAG_OBSERVER, FLAG_TOKEN = 0x0002, 0x0004, 0x0008
local HELLO_ACK_SESSION_LEN = 48
local roles = { [1] = "driver", [2] = "observer" }
local backends = { [0] = "hardware", [1] = "built-in engine", [2] = "USARSim", [3] = "Gazebo" }
local flipper_names = { "FL", "FR", "RL", "RR" }

local function u(s) return { " " .. s } end

local f = {}
local function add(field) f[#f + 1] = field; return field end

-- header
local F_magic = add(ProtoField.string("krp.magic", "Magic"))
local F_version = add(ProtoField.uint8("krp.version", "Version", base.DEC))
local F_type = add(ProtoField.uint8("krp.type", "Message type", base.HEX, types))
local F_seq = add(ProtoField.uint32("krp.seq", "Sequence number", base.DEC))
local F_len = add(ProtoField.uint16("krp.length", "Payload length", base.UNIT_STRING, u("bytes")))
local F_flags = add(ProtoField.uint16("krp.flags", "Header flags", base.HEX))
local F_ackreq = add(ProtoField.bool("krp.flags.ack_req", "ACK_REQ (answer with ACK)", 16, nil, 0x0001))
local F_session = add(ProtoField.bool("krp.flags.session", "SESSION (HELLO: open a session)", 16, nil, 0x0002))
local F_observer = add(ProtoField.bool("krp.flags.observer", "OBSERVER (HELLO: observe, do not drive)", 16, nil, 0x0004))
local F_tokenflag = add(ProtoField.bool("krp.flags.token", "TOKEN (session token after the payload)", 16, nil, 0x0008))
local F_flags_rsv = add(ProtoField.uint16("krp.flags.reserved", "Reserved flag bits", base.HEX, nil, 0xFFF0))
local F_token = add(ProtoField.uint32("krp.token", "Session token", base.HEX))
local F_dir = add(ProtoField.string("krp.direction", "Direction"))
local F_payload = add(ProtoField.bytes("krp.payload", "Payload"))

-- HELLO
local F_hello_name = add(ProtoField.string("krp.hello.name", "Controller name"))
-- CRAWLER
local F_cr_left = add(ProtoField.int32("krp.crawler.left", "Left belt speed set-point", base.UNIT_STRING, u("mm/s")))
local F_cr_right = add(ProtoField.int32("krp.crawler.right", "Right belt speed set-point", base.UNIT_STRING, u("mm/s")))
-- FLIPPER
local F_fl_mask = add(ProtoField.uint8("krp.flipper.mask", "Flipper mask", base.HEX))
local F_fl_mask_bit = {}
for k = 1, 4 do
    F_fl_mask_bit[k] = add(ProtoField.bool("krp.flipper.mask." .. flipper_names[k]:lower(),
        flipper_names[k] .. " selected", 8, nil, bit32.lshift(1, k - 1)))
end
local F_fl_mask_rsv = add(ProtoField.uint8("krp.flipper.mask.reserved", "Mask bits 4-7 (select nothing)", base.HEX, nil, 0xF0))
local F_fl_pad = add(ProtoField.bytes("krp.flipper.pad", "Padding"))
local F_fl_target = {}
for k = 1, 4 do
    F_fl_target[k] = add(ProtoField.int32("krp.flipper.target_" .. flipper_names[k]:lower(),
        flipper_names[k] .. " target angle", base.UNIT_STRING, u("x 0.01 deg")))
end
-- SUBSCRIBE
local F_sub_period = add(ProtoField.uint16("krp.subscribe.period", "STATUS push period (0 cancels)", base.UNIT_STRING, u("ms")))
-- ESTOP
local F_estop = add(ProtoField.uint8("krp.estop.engage", "Emergency stop", base.DEC, { [0] = "release", [1] = "engage" }))
-- WORLD_REQ / WORLD (world description extension)
local F_wr_offset = add(ProtoField.uint32("krp.world_req.offset", "Description offset asked for", base.DEC))
local F_w_total = add(ProtoField.uint32("krp.world.total_len", "Description length (bytes)", base.DEC))
local F_w_offset = add(ProtoField.uint32("krp.world.offset", "Chunk offset", base.DEC))
local F_w_data = add(ProtoField.string("krp.world.data", "Chunk (JSON text)"))
local F_w_len = add(ProtoField.uint32("krp.world.chunk_len", "Chunk length (bytes)", base.DEC))
-- ESTOP_INFO (e-stop info extension)
local F_ei_engaged = add(ProtoField.uint8("krp.estop_info.engaged", "Engagements holding", base.DEC))
local F_ei_n = add(ProtoField.uint8("krp.estop_info.n", "Engagements listed", base.DEC))
local F_ei_pad = add(ProtoField.bytes("krp.estop_info.pad", "Padding"))
local F_ei_entry = add(ProtoField.bytes("krp.estop_info.entry", "Engagement"))
local F_ei_kind = add(ProtoField.uint8("krp.estop_info.kind", "Engaged by", base.DEC, engager_kinds))
local F_ei_present = add(ProtoField.uint8("krp.estop_info.present", "Engager present", base.DEC, { [0] = "gone", [1] = "present" }))
local F_ei_held = add(ProtoField.uint32("krp.estop_info.held", "Held for", base.UNIT_STRING, u("ms")))
local F_ei_name = add(ProtoField.string("krp.estop_info.name", "Engager name"))
-- TRIAL_REQ / TRIAL (trials extension)
local trial_ops = { [0] = "state", [1] = "reset to the start gate" }
local trial_ends = { [0] = "not ended", [1] = "every repetition done", [2] = "tip-over",
    [3] = "time limit", [4] = "the program ended" }
local trial_faults = { "tip-over", "wall", "lane", "e-stop", "assist" }
local F_tr_op = add(ProtoField.uint8("krp.trial_req.op", "Operation", base.DEC, trial_ops))
local F_t_name = add(ProtoField.string("krp.trial.name", "Trial"))
local F_t_course = add(ProtoField.uint8("krp.trial.course", "Course", base.DEC, { [0] = "traverse", [1] = "figure 8" }))
local F_t_flags = add(ProtoField.uint8("krp.trial.flags", "Flags", base.HEX))
local F_t_under_way = add(ProtoField.bool("krp.trial.flags.under_way", "Repetition under way", 8, nil, 0x01))
local F_t_ended = add(ProtoField.bool("krp.trial.flags.ended", "Trial ended", 8, nil, 0x02))
local F_t_end = add(ProtoField.uint8("krp.trial.end", "Ended by", base.DEC, trial_ends))
local F_t_reps = add(ProtoField.uint16("krp.trial.reps", "Repetitions asked", base.DEC))
local F_t_rep = add(ProtoField.uint16("krp.trial.rep", "Repetition under way or next (0-based)", base.DEC))
local F_t_elapsed = add(ProtoField.uint32("krp.trial.rep_elapsed", "Repetition time", base.UNIT_STRING, u("ms")))
local F_t_rep_faults = add(ProtoField.uint16("krp.trial.rep_faults", "Repetition faults", base.DEC))
local F_t_completed = add(ProtoField.uint16("krp.trial.completed", "Repetitions completed", base.DEC))
local F_t_successes = add(ProtoField.uint16("krp.trial.successes", "Completed without a fault", base.DEC))
local F_t_faults = add(ProtoField.uint16("krp.trial.faults", "Faults", base.DEC))
local F_t_kind = add(ProtoField.uint16("krp.trial.faults_by_kind", "Faults of a kind", base.DEC))
local F_t_limit = add(ProtoField.uint32("krp.trial.limit", "Time limit", base.UNIT_STRING, u("ms")))
local F_t_left = add(ProtoField.uint32("krp.trial.left", "Time left", base.UNIT_STRING, u("ms")))
-- STEP (lockstep extension)
local F_step_us = add(ProtoField.uint32("krp.step.advance", "Robot time to let pass", base.UNIT_STRING, u("us")))
-- ACK
local F_ack_seq = add(ProtoField.uint32("krp.ack.seq", "Acknowledged seq", base.DEC))
local F_ack_type = add(ProtoField.uint8("krp.ack.type", "Acknowledged type", base.HEX, types))
local F_ack_pad = add(ProtoField.bytes("krp.ack.pad", "Padding"))
-- HELLO_ACK
local F_ha_proto = add(ProtoField.uint16("krp.hello_ack.protocol", "Protocol version", base.DEC))
local F_ha_sim = add(ProtoField.uint8("krp.hello_ack.simulated", "Simulated", base.DEC, { [0] = "hardware", [1] = "simulation" }))
local F_ha_backend = add(ProtoField.uint8("krp.hello_ack.backend", "Backend", base.DEC, backends))
local F_ha_name = add(ProtoField.string("krp.hello_ack.robot_name", "Robot name"))
local F_ha_caps = add(ProtoField.uint32("krp.hello_ack.capabilities", "Capabilities", base.HEX))
local F_ha_cap_torque = add(ProtoField.bool("krp.hello_ack.capabilities.flipper_torque", "Flipper torque", 32, nil, 0x1))
local F_ha_cap_truth = add(ProtoField.bool("krp.hello_ack.capabilities.ground_truth", "Ground-truth pose", 32, nil, 0x2))
local F_ha_cap_lock = add(ProtoField.bool("krp.hello_ack.capabilities.lockstep", "Lockstep", 32, nil, 0x4))
local F_ha_cap_world = add(ProtoField.bool("krp.hello_ack.capabilities.world", "World description (WORLD_REQ answered)", 32, nil, 0x8))
local F_ha_cap_sessions = add(ProtoField.bool("krp.hello_ack.capabilities.sessions", "Sessions (one driver, BYE, tokens)", 32, nil, 0x10))
local F_ha_cap_key = add(ProtoField.bool("krp.hello_ack.capabilities.shared_key", "Shared key (datagrams signed)", 32, nil, 0x20))
local F_ha_cap_estop_info = add(ProtoField.bool("krp.hello_ack.capabilities.estop_info", "E-stop info (ESTOP_INFO_REQ answered)", 32, nil, 0x40))
local F_ha_cap_trial = add(ProtoField.bool("krp.hello_ack.capabilities.trial", "Trial (TRIAL_REQ answered)", 32, nil, 0x80))
local F_ha_cap_rsv = add(ProtoField.uint32("krp.hello_ack.capabilities.reserved", "Other capability bits", base.HEX, nil, 0xFFFFFF00))
local F_ha_role = add(ProtoField.uint8("krp.hello_ack.role", "Session role", base.DEC, roles))
local F_ha_token = add(ProtoField.uint32("krp.hello_ack.token", "Session token", base.HEX))
local F_ha_cpm = add(ProtoField.int32("krp.hello_ack.counts_per_m", "Encoder counts per metre", base.UNIT_STRING, u("counts/m")))
local F_ha_vmax = add(ProtoField.int32("krp.hello_ack.max_speed", "Belt speed limit", base.UNIT_STRING, u("mm/s")))
local F_ha_fmin = add(ProtoField.int32("krp.hello_ack.flipper_min", "Flipper angle minimum", base.UNIT_STRING, u("x 0.01 deg")))
local F_ha_fmax = add(ProtoField.int32("krp.hello_ack.flipper_max", "Flipper angle maximum", base.UNIT_STRING, u("x 0.01 deg")))
-- STATUS
local F_st_req = add(ProtoField.uint32("krp.status.req_seq", "Answers STATUS_REQ seq (0: subscription push)", base.DEC))
local F_st_time = add(ProtoField.uint64("krp.status.time", "Robot clock", base.UNIT_STRING, u("us")))
local F_st_count = {
    add(ProtoField.int32("krp.status.count_left", "Left belt encoder", base.UNIT_STRING, u("counts"))),
    add(ProtoField.int32("krp.status.count_right", "Right belt encoder", base.UNIT_STRING, u("counts"))),
}
local F_st_speed = {
    add(ProtoField.int32("krp.status.speed_left", "Left belt speed", base.UNIT_STRING, u("mm/s"))),
    add(ProtoField.int32("krp.status.speed_right", "Right belt speed", base.UNIT_STRING, u("mm/s"))),
}
local F_st_angle, F_st_torque = {}, {}
for k = 1, 4 do
    local n = flipper_names[k]
    F_st_angle[k] = add(ProtoField.int32("krp.status.flipper_" .. n:lower(), n .. " flipper angle", base.UNIT_STRING, u("x 0.01 deg")))
end
for k = 1, 4 do
    local n = flipper_names[k]
    F_st_torque[k] = add(ProtoField.int32("krp.status.torque_" .. n:lower(), n .. " flipper torque", base.UNIT_STRING, u("mN m")))
end
local axes = { "x", "y", "z" }
local F_st_rpy = {
    add(ProtoField.int32("krp.status.roll", "Roll (+ lifts the left side)", base.UNIT_STRING, u("x 0.01 deg"))),
    add(ProtoField.int32("krp.status.pitch", "Pitch (+ lowers the nose)", base.UNIT_STRING, u("x 0.01 deg"))),
    add(ProtoField.int32("krp.status.yaw", "Yaw (+ turns left)", base.UNIT_STRING, u("x 0.01 deg"))),
}
local F_st_rate, F_st_acc, F_st_pos = {}, {}, {}
for i = 1, 3 do
    F_st_rate[i] = add(ProtoField.int32("krp.status.rate_" .. axes[i], "Angular rate " .. axes[i] .. " (body)", base.UNIT_STRING, u("mdeg/s")))
end
for i = 1, 3 do
    F_st_acc[i] = add(ProtoField.int32("krp.status.accel_" .. axes[i], "Acceleration " .. axes[i] .. " (body, gravity included)", base.UNIT_STRING, u("mm/s^2")))
end
for i = 1, 3 do
    F_st_pos[i] = add(ProtoField.int32("krp.status.pos_" .. axes[i], "Position " .. axes[i] .. " (world, ground truth)", base.UNIT_STRING, u("mm")))
end
local F_st_batt = add(ProtoField.uint16("krp.status.battery", "Battery", base.UNIT_STRING, u("mV")))
local F_st_flags = add(ProtoField.uint16("krp.status.flags", "State flags", base.HEX))
local status_bits = {
    { "estop", "ESTOP (emergency stop engaged)", 0x01 },
    { "backend_up", "BACKEND_UP (simulator or hardware link up)", 0x02 },
    { "simulated", "SIMULATED", 0x04 },
    { "watchdog", "WATCHDOG (stopped: commands stopped arriving)", 0x08 },
    { "clamped", "CLAMPED (last set-point was clamped)", 0x10 },
    { "stale", "STALE (sensor data older than 500 ms)", 0x20 },
}
local F_st_bit = {}
for i, b in ipairs(status_bits) do
    F_st_bit[i] = add(ProtoField.bool("krp.status.flags." .. b[1], b[2], 16, nil, b[3]))
end
local F_st_rsv = add(ProtoField.uint16("krp.status.flags.reserved", "Other flag bits", base.HEX, nil, 0xFFC0))
-- ERROR
local F_er_seq = add(ProtoField.uint32("krp.error.seq", "Offending seq", base.DEC))
local F_er_type = add(ProtoField.uint8("krp.error.type", "Offending type", base.HEX, types))
local F_er_code = add(ProtoField.uint8("krp.error.code", "Error code", base.DEC, error_codes))
local F_er_pad = add(ProtoField.bytes("krp.error.pad", "Padding"))

krp.fields = f

local E = {
    bad_magic = ProtoExpert.new("krp.expert.bad_magic", "Bad magic: not KRP/1 (the robot drops it without answer)", expert.group.MALFORMED, expert.severity.ERROR),
    short = ProtoExpert.new("krp.expert.short", "Header incomplete (answered with ERROR BAD_LENGTH)", expert.group.MALFORMED, expert.severity.ERROR),
    too_big = ProtoExpert.new("krp.expert.too_big", "Datagram over 512 bytes (answered with ERROR BAD_LENGTH)", expert.group.MALFORMED, expert.severity.ERROR),
    bad_version = ProtoExpert.new("krp.expert.bad_version", "Version is not 1 (answered with ERROR BAD_VERSION)", expert.group.MALFORMED, expert.severity.ERROR),
    bad_length = ProtoExpert.new("krp.expert.bad_length", "Length field differs from the datagram (answered with ERROR BAD_LENGTH)", expert.group.MALFORMED, expert.severity.ERROR),
    unknown_type = ProtoExpert.new("krp.expert.unknown_type", "Unknown message type (answered with ERROR UNKNOWN_TYPE)", expert.group.MALFORMED, expert.severity.ERROR),
    bad_payload = ProtoExpert.new("krp.expert.bad_payload", "Payload length wrong for the type (answered with ERROR BAD_LENGTH)", expert.group.MALFORMED, expert.severity.ERROR),
    wrong_way = ProtoExpert.new("krp.expert.wrong_way", "Robot-to-controller type sent to the robot (answered with ERROR UNKNOWN_TYPE)", expert.group.PROTOCOL, expert.severity.WARN),
    pad = ProtoExpert.new("krp.expert.pad_nonzero", "Padding is not zero", expert.group.PROTOCOL, expert.severity.NOTE),
    reserved = ProtoExpert.new("krp.expert.reserved_flags", "Reserved flag bits set (receivers ignore them)", expert.group.PROTOCOL, expert.severity.NOTE),
    range = ProtoExpert.new("krp.expert.range", "Value out of range (clamped or refused with ERROR RANGE)", expert.group.PROTOCOL, expert.severity.WARN),
    error = ProtoExpert.new("krp.expert.error", "The robot answered with ERROR", expert.group.RESPONSE_CODE, expert.severity.NOTE),
}
krp.experts = { E.bad_magic, E.short, E.too_big, E.bad_version, E.bad_length, E.unknown_type,
    E.bad_payload, E.wrong_way, E.pad, E.reserved, E.range, E.error }

krp.prefs.udp_port = Pref.uint("UDP port", 9750, "UDP port always decoded as KRP/1")
krp.prefs.heuristic = Pref.bool("Recognise KRP/1 on any UDP port", true,
    "Decode UDP datagrams that start with a KRP/1 header (\"KN\", version 1) whatever their port")

local function type_name(t)
    return types[t] or string.format("unknown 0x%02x", t)
end

local function cdeg(v)
    return string.format(" (%.2f deg)", v / 100)
end

local function nul_string(tvb_range)
    return tvb_range:stringz()
end

local function check_pad(tree, range)
    for i = 0, range:len() - 1 do
        if range:range(i, 1):uint() ~= 0 then
            tree:add_proto_expert_info(E.pad)
            return
        end
    end
end

local function le_int(buf, off) return buf(off, 4):le_int() end

-- Payload decoders: (buf, tree, offset of the payload) -> text for the Info column
local decode = {}

decode[0x01] = function(buf, t, off)
    local name = nul_string(buf(off, 16))
    t:add(F_hello_name, buf(off, 16), name)
    return string.format("name \"%s\"", name)
end

decode[0x02] = function(buf, t, off)
    t:add_le(F_cr_left, buf(off, 4))
    t:add_le(F_cr_right, buf(off + 4, 4))
    return string.format("L=%d R=%d mm/s", le_int(buf, off), le_int(buf, off + 4))
end

decode[0x03] = function(buf, t, off)
    local mask = buf(off, 1):uint()
    local m = t:add(F_fl_mask, buf(off, 1))
    for k = 1, 4 do m:add(F_fl_mask_bit[k], buf(off, 1)) end
    m:add(F_fl_mask_rsv, buf(off, 1))
    local p = t:add(F_fl_pad, buf(off + 1, 3))
    check_pad(p, buf(off + 1, 3))
    local parts = {}
    for k = 1, 4 do
        local v = le_int(buf, off + 4 + 4 * (k - 1))
        local it = t:add_le(F_fl_target[k], buf(off + 4 + 4 * (k - 1), 4))
        it:append_text(cdeg(v))
        if bit32.band(mask, bit32.lshift(1, k - 1)) == 0 then
            it:append_text(" [not selected]")
        else
            parts[#parts + 1] = string.format("%s=%.2f", flipper_names[k], v / 100)
        end
    end
    return "mask=0x" .. string.format("%x", mask) .. (#parts > 0 and (" " .. table.concat(parts, " ") .. " deg") or "")
end

decode[0x04] = function() return "" end
decode[0x05] = function() return "" end

decode[0x06] = function(buf, t, off)
    local v = buf(off, 2):le_uint()
    local it = t:add_le(F_sub_period, buf(off, 2))
    if v ~= 0 and (v < 10 or v > 1000) then
        it:add_proto_expert_info(E.range, "Period outside 10-1000 ms (clamped, answered with ERROR RANGE)")
    end
    return v == 0 and "cancel" or string.format("every %d ms", v)
end

decode[0x07] = function(buf, t, off)
    local v = buf(off, 1):uint()
    local it = t:add(F_estop, buf(off, 1))
    if v > 1 then
        it:add_proto_expert_info(E.range, "ESTOP value other than 0 or 1 (ignored, ERROR RANGE)")
    end
    return v == 1 and "engage" or (v == 0 and "release" or string.format("value %d", v))
end

decode[0x08] = function(buf, t, off)
    t:add_le(F_wr_offset, buf(off, 4))
    return string.format("offset %d", buf(off, 4):le_uint())
end

decode[0x0A] = function(buf, t, off)
    local v = buf(off, 4):le_uint()
    local it = t:add_le(F_step_us, buf(off, 4))
    if v < 1000 or v > 10000000 then
        it:add_proto_expert_info(E.range, "STEP outside 1000..10000000 us (refused, ERROR RANGE)")
    end
    return string.format("%.3f ms", v / 1000)
end

decode[0x86] = function(buf, t, off)
    local total, at = buf(off, 4):le_uint(), buf(off + 4, 4):le_uint()
    local n = buf:len() - off - 8
    t:add_le(F_w_total, buf(off, 4))
    t:add_le(F_w_offset, buf(off + 4, 4))
    t:add(F_w_len, buf(off, 8), n):set_generated()
    if n > 0 then
        local d = t:add(F_w_data, buf(off + 8, n))
        if at + n > total then
            d:add_proto_expert_info(E.range, "Chunk runs past the description's length")
        end
    end
    return string.format("bytes %d-%d of %d", at, at + n, total)
end

decode[0x0B] = function() return "" end

decode[0x87] = function(buf, t, off)
    local engaged, n = buf(off, 1):uint(), buf(off + 1, 1):uint()
    t:add(F_ei_engaged, buf(off, 1))
    t:add(F_ei_n, buf(off + 1, 1))
    local p = t:add(F_ei_pad, buf(off + 2, 2))
    check_pad(p, buf(off + 2, 2))
    local who = {}
    for i = 0, n - 1 do
        local o = off + 4 + ESTOP_ENTRY_LEN * i
        local kind, present = buf(o, 1):uint(), buf(o + 1, 1):uint()
        local name = nul_string(buf(o + 8, 16))
        local e = t:add(F_ei_entry, buf(o, ESTOP_ENTRY_LEN))
        e:set_text(string.format("Engagement %d: %s \"%s\"%s, held %.1f s", i + 1,
            engager_kinds[kind] or ("kind " .. kind), name, present == 0 and " (gone)" or "",
            buf(o + 4, 4):le_uint() / 1000))
        e:add(F_ei_kind, buf(o, 1))
        e:add(F_ei_present, buf(o + 1, 1))
        check_pad(e, buf(o + 2, 2))
        e:add_le(F_ei_held, buf(o + 4, 4))
        e:add(F_ei_name, buf(o + 8, 16), name)
        who[#who + 1] = string.format("%s(%s%s)", name ~= "" and name or "?",
            engager_kinds[kind] or "?", present == 0 and ", gone" or "")
    end
    if engaged < n then
        t:add_proto_expert_info(E.range, "Fewer engagements holding than listed")
    end
    return string.format("engaged %d%s%s", engaged, #who > 0 and ": " or "", table.concat(who, " "))
end

decode[0x0C] = function(buf, t, off)
    t:add(F_tr_op, buf(off, 1))
    local p = t:add(F_ei_pad, buf(off + 1, 3))
    check_pad(p, buf(off + 1, 3))
    return "op=" .. (trial_ops[buf(off, 1):uint()] or buf(off, 1):uint())
end

decode[0x88] = function(buf, t, off)
    local name = nul_string(buf(off, 32))
    t:add(F_t_name, buf(off, 32), name)
    t:add(F_t_course, buf(off + 32, 1))
    local f = t:add(F_t_flags, buf(off + 33, 1))
    f:add(F_t_under_way, buf(off + 33, 1))
    f:add(F_t_ended, buf(off + 33, 1))
    t:add(F_t_end, buf(off + 34, 1))
    check_pad(t, buf(off + 35, 1))
    t:add_le(F_t_reps, buf(off + 36, 2))
    t:add_le(F_t_rep, buf(off + 38, 2))
    t:add_le(F_t_elapsed, buf(off + 40, 4))
    t:add_le(F_t_rep_faults, buf(off + 44, 2))
    t:add_le(F_t_completed, buf(off + 46, 2))
    t:add_le(F_t_successes, buf(off + 48, 2))
    t:add_le(F_t_faults, buf(off + 50, 2))
    for i = 0, 4 do
        local k = t:add_le(F_t_kind, buf(off + 52 + 2 * i, 2))
        k:prepend_text(trial_faults[i + 1] .. ": ")
    end
    check_pad(t, buf(off + 62, 2))
    t:add_le(F_t_limit, buf(off + 64, 4))
    t:add_le(F_t_left, buf(off + 68, 4))
    local flags = buf(off + 33, 1):uint()
    return string.format("%s rep %d of %d%s, %d completed, %d fault-free, %d faults%s", name,
        buf(off + 38, 2):le_uint() + 1, buf(off + 36, 2):le_uint(),
        bit32.band(flags, 1) ~= 0 and " under way" or "", buf(off + 46, 2):le_uint(),
        buf(off + 48, 2):le_uint(), buf(off + 50, 2):le_uint(),
        bit32.band(flags, 2) ~= 0 and (", ended: " .. (trial_ends[buf(off + 34, 1):uint()] or "?")) or "")
end

decode[0x80] = function(buf, t, off)
    t:add_le(F_ack_seq, buf(off, 4))
    t:add(F_ack_type, buf(off + 4, 1))
    local p = t:add(F_ack_pad, buf(off + 5, 3))
    check_pad(p, buf(off + 5, 3))
    return string.format("for %s seq=%d", type_name(buf(off + 4, 1):uint()), buf(off, 4):le_uint())
end

decode[0x81] = function(buf, t, off)
    t:add_le(F_ha_proto, buf(off, 2))
    t:add(F_ha_sim, buf(off + 2, 1))
    t:add(F_ha_backend, buf(off + 3, 1))
    local name = nul_string(buf(off + 4, 16))
    t:add(F_ha_name, buf(off + 4, 16), name)
    local c = t:add_le(F_ha_caps, buf(off + 20, 4))
    c:add_le(F_ha_cap_torque, buf(off + 20, 4))
    c:add_le(F_ha_cap_truth, buf(off + 20, 4))
    c:add_le(F_ha_cap_lock, buf(off + 20, 4))
    c:add_le(F_ha_cap_world, buf(off + 20, 4))
    c:add_le(F_ha_cap_sessions, buf(off + 20, 4))
    c:add_le(F_ha_cap_key, buf(off + 20, 4))
    c:add_le(F_ha_cap_estop_info, buf(off + 20, 4))
    c:add_le(F_ha_cap_trial, buf(off + 20, 4))
    c:add_le(F_ha_cap_rsv, buf(off + 20, 4))
    t:add_le(F_ha_cpm, buf(off + 24, 4))
    t:add_le(F_ha_vmax, buf(off + 28, 4))
    t:add_le(F_ha_fmin, buf(off + 32, 4)):append_text(cdeg(le_int(buf, off + 32)))
    t:add_le(F_ha_fmax, buf(off + 36, 4)):append_text(cdeg(le_int(buf, off + 36)))
    local sim = buf(off + 2, 1):uint()
    local session = ""
    if buf:len() - off >= HELLO_ACK_SESSION_LEN then
        local role = buf(off + 40, 1):uint()
        t:add(F_ha_role, buf(off + 40, 1))
        check_pad(t, buf(off + 41, 3))
        t:add_le(F_ha_token, buf(off + 44, 4))
        session = string.format(", session %s token 0x%08x", roles[role] or "?", buf(off + 44, 4):le_uint())
    end
    return string.format("\"%s\" %s, %s%s", name, sim == 1 and "simulated" or "hardware",
        backends[buf(off + 3, 1):uint()] or "unknown backend", session)
end

decode[0x85] = function(buf, t, off)
    local req = buf(off, 4):le_uint()
    t:add_le(F_st_req, buf(off, 4))
    local time = buf(off + 4, 8):le_uint64()
    t:add_le(F_st_time, buf(off + 4, 8)):append_text(string.format(" (%.6f s)", time:tonumber() / 1e6))
    local o = off + 12
    for i = 1, 2 do t:add_le(F_st_count[i], buf(o, 4)); o = o + 4 end
    for i = 1, 2 do t:add_le(F_st_speed[i], buf(o, 4)); o = o + 4 end
    for k = 1, 4 do t:add_le(F_st_angle[k], buf(o, 4)):append_text(cdeg(le_int(buf, o))); o = o + 4 end
    for k = 1, 4 do t:add_le(F_st_torque[k], buf(o, 4)); o = o + 4 end
    for i = 1, 3 do t:add_le(F_st_rpy[i], buf(o, 4)):append_text(cdeg(le_int(buf, o))); o = o + 4 end
    for i = 1, 3 do t:add_le(F_st_rate[i], buf(o, 4)); o = o + 4 end
    for i = 1, 3 do t:add_le(F_st_acc[i], buf(o, 4)); o = o + 4 end
    for i = 1, 3 do t:add_le(F_st_pos[i], buf(o, 4)); o = o + 4 end
    t:add_le(F_st_batt, buf(o, 2)); o = o + 2
    local flags = buf(o, 2):le_uint()
    local ft = t:add_le(F_st_flags, buf(o, 2))
    local names = {}
    for i, b in ipairs(status_bits) do
        ft:add_le(F_st_bit[i], buf(o, 2))
        if bit32.band(flags, b[3]) ~= 0 then names[#names + 1] = b[1]:upper() end
    end
    ft:add_le(F_st_rsv, buf(o, 2))
    if #names > 0 then ft:append_text(" (" .. table.concat(names, ", ") .. ")") end
    return string.format("%s pos=(%d, %d) mm yaw=%.2f deg [%s]",
        req == 0 and "push" or ("req=" .. req), le_int(buf, off + 96), le_int(buf, off + 100),
        le_int(buf, off + 68) / 100, table.concat(names, ","))
end

decode[0xFF] = function(buf, t, off)
    t:add_le(F_er_seq, buf(off, 4))
    t:add(F_er_type, buf(off + 4, 1))
    local code = buf(off + 5, 1):uint()
    local ci = t:add(F_er_code, buf(off + 5, 1))
    ci:add_proto_expert_info(E.error, "ERROR " .. (error_codes[code] or tostring(code)) .. ": " ..
        (error_text[code] or "unknown code"))
    local p = t:add(F_er_pad, buf(off + 6, 2))
    check_pad(p, buf(off + 6, 2))
    local seq, ty = buf(off, 4):le_uint(), buf(off + 4, 1):uint()
    return string.format("%s for %s seq=%d", error_codes[code] or ("code " .. code),
        ty == 0 and "header" or type_name(ty), seq)
end

local function dissect(buf, pinfo, tree)
    local len = buf:len()
    pinfo.cols.protocol = "KRP/1"
    local t = tree:add(krp, buf(), "Kenaf Robot Protocol (KRP/1)")
    if len < 2 or buf(0, 2):string() ~= "KN" then
        t:add_proto_expert_info(E.bad_magic)
        pinfo.cols.info = "Not KRP/1: bad magic (dropped by the robot)"
        return len
    end
    t:add(F_magic, buf(0, 2))
    if len < HDR_LEN then
        t:add_proto_expert_info(E.short, string.format("Header incomplete: %d bytes, need 12 (answered with ERROR BAD_LENGTH)", len))
        pinfo.cols.info = "Truncated KRP/1 header"
        return len
    end
    local version = buf(2, 1):uint()
    local ty = buf(3, 1):uint()
    local seq = buf(4, 4):le_uint()
    local plen = buf(8, 2):le_uint()
    local flags = buf(10, 2):le_uint()
    local vi = t:add(F_version, buf(2, 1))
    t:add(F_type, buf(3, 1))
    local to_robot = ty < 0x80
    t:add(F_dir, buf(3, 1), to_robot and "controller -> robot" or "robot -> controller"):set_generated()
    t:add_le(F_seq, buf(4, 4))
    local li = t:add_le(F_len, buf(8, 2))
    local fl = t:add_le(F_flags, buf(10, 2))
    fl:add_le(F_ackreq, buf(10, 2))
    fl:add_le(F_session, buf(10, 2))
    fl:add_le(F_observer, buf(10, 2))
    fl:add_le(F_tokenflag, buf(10, 2))
    fl:add_le(F_flags_rsv, buf(10, 2))
    if bit32.band(flags, 0xFFF0) ~= 0 then fl:add_proto_expert_info(E.reserved) end
    if not to_robot and pinfo.dst_port == krp.prefs.udp_port and pinfo.src_port ~= krp.prefs.udp_port then
        t:add_proto_expert_info(E.wrong_way)
    end

    local info = string.format("%s seq=%d", type_name(ty), seq)
    if bit32.band(flags, 1) ~= 0 then info = info .. " [ACK_REQ]" end
    if ty == 0x01 and bit32.band(flags, FLAG_SESSION) ~= 0 then
        info = info .. (bit32.band(flags, FLAG_OBSERVER) ~= 0 and " [SESSION observer]" or " [SESSION driver]")
    end
    pinfo.cols.info = info
    t:append_text(", " .. type_name(ty) .. ", seq " .. seq)

    if len > MAX_DGRAM then
        t:add_proto_expert_info(E.too_big, string.format("Datagram of %d bytes, over 512 (answered with ERROR BAD_LENGTH)", len))
        return len
    end
    if version ~= 1 then
        vi:add_proto_expert_info(E.bad_version)
        return len
    end
    if plen ~= len - HDR_LEN then
        li:add_proto_expert_info(E.bad_length, string.format("Length field says %d payload bytes, the datagram has %d (answered with ERROR BAD_LENGTH)", plen, len - HDR_LEN))
        if len > HDR_LEN then t:add(F_payload, buf(HDR_LEN)) end
        return len
    end
    local want = payload_len[ty]
    if want == nil then
        t:add_proto_expert_info(E.unknown_type, string.format("Unknown message type 0x%02x (answered with ERROR UNKNOWN_TYPE)", ty))
        if len > HDR_LEN then t:add(F_payload, buf(HDR_LEN)) end
        return len
    end
    if ty == 0x86 and plen >= want and plen <= want + WORLD_CHUNK_MAX then
        want = plen
    end
    if ty == 0x87 and plen >= want and (plen - want) % ESTOP_ENTRY_LEN == 0 and
        (plen - want) / ESTOP_ENTRY_LEN <= ESTOP_ENTRIES_MAX and
        buf(HDR_LEN + 1, 1):uint() == (plen - want) / ESTOP_ENTRY_LEN then
        want = plen
    end
    if ty == 0x81 and plen == HELLO_ACK_SESSION_LEN then
        want = plen
    end
    local token = to_robot and bit32.band(flags, FLAG_TOKEN) ~= 0
    if token and plen == want + 4 then
        t:add_le(F_token, buf(HDR_LEN + want, 4))
        info = info .. string.format(" token=0x%08x", buf(HDR_LEN + want, 4):le_uint())
        pinfo.cols.info = info
        plen = want
    end
    if plen ~= want then
        li:add_proto_expert_info(E.bad_payload, string.format("%s carries %d payload bytes, not %d (answered with ERROR BAD_LENGTH)", type_name(ty), want, plen))
        if len > HDR_LEN then t:add(F_payload, buf(HDR_LEN)) end
        return len
    end
    local pt = t
    if want > 0 then
        pt = t:add(krp, buf(HDR_LEN, want), type_name(ty) .. " payload")
    end
    local extra = decode[ty](buf, pt, HDR_LEN)
    if extra ~= "" then pinfo.cols.info = info .. " " .. extra end
    return len
end

function krp.dissector(buf, pinfo, tree)
    return dissect(buf, pinfo, tree)
end

-- A datagram on another port counts as KRP/1 when its header is one.
local function heuristic(buf, pinfo, tree)
    if not krp.prefs.heuristic then return false end
    local len = buf:len()
    if len < HDR_LEN or len > 65535 then return false end
    if buf(0, 2):string() ~= "KN" or buf(2, 1):uint() ~= 1 then return false end
    if buf(8, 2):le_uint() ~= len - HDR_LEN and types[buf(3, 1):uint()] == nil then return false end
    dissect(buf, pinfo, tree)
    return true
end

local udp_table = DissectorTable.get("udp.port")
local registered_port = krp.prefs.udp_port
udp_table:add(registered_port, krp)
krp:register_heuristic("udp", heuristic)

function krp.prefs_changed()
    if registered_port ~= krp.prefs.udp_port then
        if registered_port ~= 0 then udp_table:remove(registered_port, krp) end
        registered_port = krp.prefs.udp_port
        if registered_port ~= 0 then udp_table:add(registered_port, krp) end
    end
end
