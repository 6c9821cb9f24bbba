import { Effect } from "effect"
import { HttpRouter } from "effect/http"

/**
 * Each request yields to Effect's scheduler once before it is handled, so the
 * requests read in one turn of the event loop are handled together afterwards
 * (in the scheduler's batch) instead of one by one inside each socket's read
 * callback. Under load this took a quarter off the CPU per request in the
 * loopback benchmarks (docs/benchmarks.md, "Measured: handling after
 * reading"); why is not established. A request alone waits for one
 * scheduler turn (microseconds).
 */
export const BatchedHandlingLive = HttpRouter.middleware((app) => Effect.andThen(Effect.yieldNow, app), { global: true })
