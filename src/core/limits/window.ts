// Rate windows in Redis, shared by every process on one Redis: the
// chain-publication windows of the cost guard and the submission send-rate
// windows. Several windows are checked and charged in one Lua script: either
// every window has room and all are charged, or none is; a charge can be
// refunded (the message was not accepted after all).
//
// Two kinds:
//   - `bucket` (default): a token bucket kept as one key (GCRA: the key holds
//     the "theoretical arrival time" in ms), so a window is one small string
//     whatever its limit, expires by itself once full again, and a refund is
//     exact. { limit: N, windowMs: W } lets N units through at once, then one
//     more every W / N ms; a full bucket is back after W of silence.
//   - `fixed`: a counter per clock-aligned window (`<key>:<start ms>`, start
//     = now rounded down to a multiple of W), N units per window, living 2 W
//     so it outlives its window under clock skew between servers.
import type { Redis } from 'ioredis';

export interface WindowSpec {
  /** The Redis key (built by src/core/limits/redis-keys.ts); a fixed window appends `:<start ms>`. */
  key: string;
  /** Units per window; 0 (or less) turns the window off. */
  limit: number;
  windowMs: number;
  kind?: 'bucket' | 'fixed';
}

/** A window as `take` charged it: a fixed window remembers which one was current. */
export interface ChargedWindow extends WindowSpec {
  start?: number;
}

export type WindowTake =
  | { ok: true /** The windows charged, for `refund`. */; windows: ChargedWindow[] }
  | { ok: false /** The first full window. */; window: ChargedWindow; retryAfterMs: number };

// Forgiven when comparing (ms), so float rounding of the stored times (about
// 1e-4 ms per step at today's epoch) never refuses the last unit of a bucket.
const EPSILON_MS = 0.5;

// KEYS: windows. ARGV: now ms, cost, commit (1/0), epsilon ms, then kind
// ('b'/'f'), limit and window ms per key. Returns {0, 0} when every window
// has room (and charges them when commit is 1), else {index of the first
// full window, retry ms}.
const TAKE = `
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local eps = tonumber(ARGV[4])
local charged = {}
for i, key in ipairs(KEYS) do
  local at = 2 + i * 3
  local limit = tonumber(ARGV[at + 1])
  local window = tonumber(ARGV[at + 2])
  if ARGV[at] == 'f' then
    local n = tonumber(redis.call('GET', key) or '0')
    if n + cost > limit then return {i, math.max(1, math.ceil(window - now % window))} end
  else
    local interval = window / limit
    local tat = tonumber(redis.call('GET', key) or '0')
    if tat < now then tat = now end
    local after = tat + cost * interval
    if after - now - window > eps then
      return {i, math.max(1, math.ceil(after - now - window))}
    end
    charged[i] = after
  end
end
if ARGV[3] == '1' then
  for i, key in ipairs(KEYS) do
    local at = 2 + i * 3
    if ARGV[at] == 'f' then
      redis.call('INCRBY', key, cost)
      if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, 2 * tonumber(ARGV[at + 2])) end
    else
      redis.call('SET', key, string.format('%.17g', charged[i]), 'PX', math.ceil(charged[i] - now) + 1000)
    end
  end
end
return {0, 0}
`;

// KEYS: windows. ARGV: now ms, cost, then kind, limit and window ms per key.
// Gives units back; a window that emptied (or expired) meanwhile is left alone.
const REFUND = `
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local at = i * 3
  if ARGV[at] == 'f' then
    if redis.call('EXISTS', key) == 1 and redis.call('DECRBY', key, cost) <= 0 then redis.call('DEL', key) end
  else
    local tat = tonumber(redis.call('GET', key) or '0')
    if tat > now then
      tat = tat - cost * tonumber(ARGV[at + 2]) / tonumber(ARGV[at + 1])
      if tat <= now then
        redis.call('DEL', key)
      else
        redis.call('SET', key, string.format('%.17g', tat), 'PX', math.ceil(tat - now) + 1000)
      end
    end
  end
end
return 0
`;

// KEYS: windows. ARGV: now ms, then kind, limit and window ms per key. Units in use per window.
const USAGE = `
local now = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local at = i * 3 - 1
  local value = tonumber(redis.call('GET', key) or '0')
  if ARGV[at] == 'f' then
    out[i] = tostring(value)
  else
    if value < now then value = now end
    out[i] = tostring((value - now) * tonumber(ARGV[at + 1]) / tonumber(ARGV[at + 2]))
  end
end
return out
`;

const TAKE_COMMAND = 'sealpostWindowTake';
const REFUND_COMMAND = 'sealpostWindowRefund';
const USAGE_COMMAND = 'sealpostWindowUsage';

type ScriptFn = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

// defineCommand sends EVALSHA and falls back to EVAL when Redis lacks the script.
function command(redis: Redis, name: string, lua: string): ScriptFn {
  if (!(name in redis)) redis.defineCommand(name, { lua });
  const fn = (redis as unknown as Record<string, ScriptFn>)[name] as ScriptFn;
  return fn.bind(redis);
}

/** The windows that are on, fixed ones pinned to the window current at `now` unless already pinned. */
function resolve(windows: ChargedWindow[], now: number): ChargedWindow[] {
  return windows
    .filter((w) => w.limit > 0)
    .map((w) => {
      if (!(w.windowMs > 0)) throw new RangeError(`window ${w.key}: windowMs must be > 0`);
      if (w.kind !== 'fixed' || w.start !== undefined) return w;
      return { ...w, start: Math.floor(now / w.windowMs) * w.windowMs };
    });
}

function redisKey(w: ChargedWindow): string {
  return w.kind === 'fixed' ? `${w.key}:${w.start}` : w.key;
}

function scriptArgs(windows: ChargedWindow[]): (string | number)[] {
  return windows.flatMap((w) => [w.kind === 'fixed' ? 'f' : 'b', w.limit, w.windowMs]);
}

export class WindowLimiter {
  private readonly takeScript: ScriptFn;
  private readonly refundScript: ScriptFn;
  private readonly usageScript: ScriptFn;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    this.takeScript = command(redis, TAKE_COMMAND, TAKE);
    this.refundScript = command(redis, REFUND_COMMAND, REFUND);
    this.usageScript = command(redis, USAGE_COMMAND, USAGE);
  }

  /** Charges `cost` units to every window, or to none when one lacks room. */
  take(windows: WindowSpec[], cost = 1): Promise<WindowTake> {
    return this.run(windows, cost, true);
  }

  /** Whether `take` would succeed now; changes nothing. */
  peek(windows: WindowSpec[], cost = 1): Promise<WindowTake> {
    return this.run(windows, cost, false);
  }

  /** Gives back units charged by `take` (pass the windows it returned). */
  async refund(windows: ChargedWindow[], cost = 1): Promise<void> {
    const now = this.now();
    const on = resolve(windows, now);
    if (on.length === 0) return;
    await this.refundScript(on.length, ...on.map(redisKey), now, cost, ...scriptArgs(on));
  }

  /** Units in use per window right now (fractional while a bucket unit refills). */
  async usage(windows: ChargedWindow[]): Promise<number[]> {
    const now = this.now();
    const on = resolve(windows, now);
    if (on.length === 0) return windows.map(() => 0);
    const raw = (await this.usageScript(on.length, ...on.map(redisKey), now, ...scriptArgs(on))) as string[];
    let j = 0;
    return windows.map((w) => (w.limit > 0 ? Number(raw[j++]) : 0));
  }

  private async run(windows: WindowSpec[], cost: number, commit: boolean): Promise<WindowTake> {
    if (!Number.isInteger(cost) || cost < 1)
      throw new RangeError(`cost must be an integer >= 1, got ${cost}`);
    const now = this.now();
    const on = resolve(windows, now);
    if (on.length === 0) return { ok: true, windows: [] };
    const [index, retry] = (await this.takeScript(
      on.length,
      ...on.map(redisKey),
      now,
      cost,
      commit ? 1 : 0,
      EPSILON_MS,
      ...scriptArgs(on),
    )) as [number, number];
    if (index === 0) return { ok: true, windows: on };
    const window = on[index - 1] as ChargedWindow;
    // A cost larger than a whole bucket never fits: say when it would have, the full window.
    const never = window.kind !== 'fixed' && cost > window.limit;
    return { ok: false, window, retryAfterMs: never ? window.windowMs : Number(retry) };
  }
}
