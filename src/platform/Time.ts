import { Clock, Effect } from "effect"

/** The current instant from Effect's `Clock`, so that tests can drive time with `TestClock`. */
export const currentDate: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
