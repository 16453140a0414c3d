// Do-not-disturb ("away") schedule of an account: weekly windows in the
// account's timezone plus exclusion dates on which no window starts.
//
//   { "windows": [{ "days": ["mon","tue"], "start": "22:00", "end": "07:00" }],
//     "exclusions": ["2026-12-24"] }
//
// A window starts at `start` on each listed day and ends at `end`; an `end`
// at or before `start` runs past midnight into the next day (equal: 24 h).
// An occurrence whose start day is an exclusion date does not happen.

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface DndWindow {
  days: Weekday[];
  /** `HH:MM`, 24-hour, local to the account's timezone. */
  start: string;
  end: string;
}

export interface DndSchedule {
  windows: DndWindow[];
  /** Local dates `YYYY-MM-DD`. */
  exclusions?: string[];
}

const HHMM = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const DATE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/** JSON schema (request validation and OpenAPI). */
export const DND_SCHEDULE_SCHEMA = {
  type: 'object',
  description:
    'Weekly windows in the account timezone; an end at or before the start runs past midnight. No window starts on an exclusion date.',
  required: ['windows'],
  additionalProperties: false,
  properties: {
    windows: {
      type: 'array',
      maxItems: 32,
      items: {
        type: 'object',
        required: ['days', 'start', 'end'],
        additionalProperties: false,
        properties: {
          days: {
            type: 'array',
            minItems: 1,
            maxItems: 7,
            uniqueItems: true,
            items: { type: 'string', enum: [...WEEKDAYS] },
          },
          start: { type: 'string', pattern: HHMM, examples: ['22:00'] },
          end: { type: 'string', pattern: HHMM, examples: ['07:00'] },
        },
      },
    },
    exclusions: {
      type: 'array',
      maxItems: 366,
      uniqueItems: true,
      items: { type: 'string', pattern: DATE, examples: ['2026-12-24'] },
    },
  },
} as const;

/** Checks what the JSON schema cannot (real calendar dates); returns a problem or null. */
export function dndScheduleProblem(schedule: DndSchedule): string | null {
  for (const [i, date] of (schedule.exclusions ?? []).entries()) {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    const t = new Date(Date.UTC(y, m - 1, d));
    if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) {
      return `dnd_schedule.exclusions[${i}] ${JSON.stringify(date)} is not a calendar date`;
    }
  }
  return null;
}

/** The canonical IANA name, or null when the runtime does not know the zone. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length === 0 || name.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function localParts(timeZone: string, at: number): { date: string; dow: number; minutes: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
    });
    formatters.set(timeZone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(new Date(at))) p[part.type] = part.value;
  return {
    date: `${p.year}-${p.month}-${p.day}`,
    dow: WEEKDAYS.indexOf((p.weekday ?? '').toLowerCase() as Weekday),
    minutes: Number(p.hour) * 60 + Number(p.minute),
  };
}

function previousDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

function toMinutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return h * 60 + m;
}

/** Whether `at` (ms) falls in a window of the schedule, read in `timeZone`. */
export function isAway(schedule: DndSchedule | null, timeZone: string, at: number): boolean {
  if (!schedule) return false;
  const today = localParts(timeZone, at);
  const yesterday = { date: previousDate(today.date), dow: (today.dow + 6) % 7 };
  const excluded = new Set(schedule.exclusions ?? []);
  for (const w of schedule.windows) {
    const start = toMinutes(w.start);
    const end = toMinutes(w.end);
    const overnight = end <= start;
    if (w.days.includes(WEEKDAYS[today.dow] as Weekday) && !excluded.has(today.date)) {
      if (today.minutes >= start && (overnight || today.minutes < end)) return true;
    }
    if (overnight && w.days.includes(WEEKDAYS[yesterday.dow] as Weekday) && !excluded.has(yesterday.date)) {
      if (today.minutes < end) return true;
    }
  }
  return false;
}
