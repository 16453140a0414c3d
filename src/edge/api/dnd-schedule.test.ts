// The away computation in local time: overnight windows, exclusions,
// daylight-saving changes and timezones far from UTC.
import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, type DndSchedule, dndScheduleProblem, isAway } from './dnd-schedule.ts';

const nights: DndSchedule = { windows: [{ days: ['fri'], start: '23:00', end: '06:00' }] };

describe('isAway', () => {
  it('follows an overnight window into the next day, and not beyond', () => {
    // Friday 6 March 2026 23:30 in Tokyo (UTC+9) = 14:30 UTC.
    expect(isAway(nights, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 14, 30))).toBe(true);
    expect(isAway(nights, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 20, 59))).toBe(true); // Sat 05:59
    expect(isAway(nights, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 21, 0))).toBe(false); // Sat 06:00
    expect(isAway(nights, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 13, 59))).toBe(false); // Fri 22:59
    expect(isAway(nights, 'UTC', Date.UTC(2026, 2, 6, 14, 30))).toBe(false);
  });

  it('skips occurrences that start on an exclusion date, also in their after-midnight part', () => {
    const s: DndSchedule = { ...nights, exclusions: ['2026-03-06'] };
    expect(isAway(s, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 14, 30))).toBe(false);
    expect(isAway(s, 'Asia/Tokyo', Date.UTC(2026, 2, 6, 18, 0))).toBe(false);
    expect(isAway(s, 'Asia/Tokyo', Date.UTC(2026, 2, 13, 14, 30))).toBe(true); // next Friday
  });

  it('reads wall-clock time across a daylight-saving change', () => {
    const mornings: DndSchedule = { windows: [{ days: ['sun'], start: '08:00', end: '09:00' }] };
    // Berlin: Sunday 29 March 2026 08:30 is CEST (UTC+2) = 06:30 UTC; a week before it is CET (UTC+1).
    expect(isAway(mornings, 'Europe/Berlin', Date.UTC(2026, 2, 29, 6, 30))).toBe(true);
    expect(isAway(mornings, 'Europe/Berlin', Date.UTC(2026, 2, 22, 7, 30))).toBe(true);
    expect(isAway(mornings, 'Europe/Berlin', Date.UTC(2026, 2, 22, 6, 30))).toBe(false);
  });

  it('treats an equal start and end as a whole day', () => {
    const allDay: DndSchedule = { windows: [{ days: ['wed'], start: '12:00', end: '12:00' }] };
    expect(isAway(allDay, 'UTC', Date.UTC(2026, 2, 4, 12, 0))).toBe(true); // Wed 12:00
    expect(isAway(allDay, 'UTC', Date.UTC(2026, 2, 5, 11, 59))).toBe(true); // Thu 11:59
    expect(isAway(allDay, 'UTC', Date.UTC(2026, 2, 5, 12, 0))).toBe(false);
    expect(isAway(null, 'UTC', Date.UTC(2026, 2, 5, 12, 0))).toBe(false);
  });
});

describe('schedule and timezone checks', () => {
  it('rejects dates that are not on the calendar', () => {
    expect(dndScheduleProblem({ windows: [], exclusions: ['2028-02-29'] })).toBeNull();
    expect(dndScheduleProblem({ windows: [], exclusions: ['2027-02-29'] })).toMatch(/not a calendar date/);
    expect(dndScheduleProblem({ windows: [], exclusions: ['2027-13-01'] })).toMatch(/exclusions\[0\]/);
  });

  it('canonicalizes IANA names and refuses unknown ones', () => {
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('Mars/Olympus')).toBeNull();
    expect(canonicalTimeZone('')).toBeNull();
  });
});
