// [limits]: the cost guard's chain-publication windows (src/limits/). Each
// window is a token bucket: `<name>_messages` publications at once, refilled
// at that many per `<name>_window_secs`; 0 messages turns a window off.
import * as z from 'zod';
import { nonNegativeInt, positiveInt } from '../fields.ts';

export const limitsSchema = z.strictObject({
  sender_messages: nonNegativeInt().default(1000),
  sender_window_secs: positiveInt().default(3600),
  recipient_messages: nonNegativeInt().default(200),
  recipient_window_secs: positiveInt().default(3600),
  overall_messages: nonNegativeInt().default(10000),
  overall_window_secs: positiveInt().default(3600),
  null_sender_messages: nonNegativeInt().default(200),
  null_sender_window_secs: positiveInt().default(3600),
  balance_check_secs: positiveInt().default(5),
});

export type LimitsInput = z.output<typeof limitsSchema>;
