import { Effect, Stream } from "effect"
import { agentTools, type ToolServices } from "../agents/AgentTools.ts"
import type { AgentToolName } from "../agents/ToolNames.ts"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { PrincipalLookup } from "../../auth/PrincipalLookup.ts"
import { AgentLimit, type AgentTool, runAgent } from "../../models/llm/Agent.ts"
import { Llm, LlmError, type LlmRequest, type StopReason } from "../../models/llm/Llm.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { Credits, type Hold, type Payer, type Spent } from "../../accounts/usage/Credits.ts"
import { InsufficientCredits } from "../../accounts/usage/Errors.ts"
import { SchedulerConfig } from "./SchedulerConfig.ts"
import type { TaskRecord } from "./TaskRecords.ts"

/**
 * A task's run through the one agent loop (src/models/llm/Agent.ts), with the tools
 * its `contextSettings.tools` names, acting as the task's user with their
 * current role and plan. Every round holds its worst case before the model
 * is called; the holds are settled together when the run is recorded — in
 * the recording transaction, so that a worker that lost its lease bills
 * nothing — and released otherwise.
 */

/** A round's hold and, once the model finished, what it cost. */
interface Bill {
  readonly hold: Hold
  spent: Spent | undefined
}

/** What a run did: its answer or failure, the tokens of every round, and its last stop reason. */
export interface AgentRun {
  readonly status: "succeeded" | "failed"
  readonly model: string
  readonly output: string | null
  readonly error: string | null
  readonly inputTokens: number
  readonly outputTokens: number
  readonly stopReason: StopReason | null
}

/** The names in `contextSettings.tools` (validated when the task was saved). */
export const toolsOf = (task: TaskRecord): ReadonlyArray<AgentToolName> => {
  const tools = task.contextSettings.tools
  return Array.isArray(tools) ? tools.filter((name): name is AgentToolName => typeof name === "string") : []
}

/** The task's tools acting as its user; a failure message when the user can no longer act in the company. */
const toolsFor = (task: TaskRecord) =>
  Effect.gen(function*() {
    const names = toolsOf(task)
    if (names.length === 0) return []
    const userId = task.userId
    const principal = userId === null
      ? undefined
      : yield* PrincipalLookup.use((lookup) => lookup.actingUser(task.companyId, userId, task.id))
    if (principal === undefined || principal._tag === "None") {
      return yield* Effect.fail("The task's user is no longer a user of its company: its tools cannot run")
    }
    const acting = principal.value
    return agentTools({ principal: acting, projectId: undefined }, names).map((tool): AgentTool<never, TaskToolServices> => ({
      definition: tool.definition,
      run: (input) => Effect.provideService(tool.run(input), CurrentPrincipal, acting)
    }))
  })

/** What a task's tools need from the worker's environment. */
export type TaskToolServices = Exclude<ToolServices, CurrentPrincipal>

/** How each round calls the model: held first, its usage kept for the settlement. */
const heldRounds = (payer: Payer, bills: Array<Bill>, last: { stopReason: StopReason | null; model: string }) =>
(request: LlmRequest) =>
  Stream.unwrap(Effect.gen(function*() {
    const billing = yield* BilledLlm.quote("tasks", request)
    const hold = yield* (yield* Credits).hold(payer, billing.estimate)
    const bill: Bill = { hold, spent: undefined }
    bills.push(bill)
    return (yield* Llm).stream(request).pipe(
      Stream.tap((event) =>
        Effect.sync(() => {
          if (event.type === "start") last.model = event.model
          if (event.type === "finish") {
            last.stopReason = event.stopReason
            bill.spent = billing.spent(event.usage, last.model)
          }
        })
      )
    )
  }))

const failureOf = (error: unknown) =>
  error instanceof LlmError
    ? `Model call failed: ${error.message}`
    : error instanceof AgentLimit || error instanceof InsufficientCredits
    ? error.message
    : typeof error === "string"
    ? error
    : "The run failed"

/**
 * Runs `request` with the task's tools and hands the outcome to `record`
 * with the settlement of every round (`settle`, answering the credits
 * charged); whatever `record` did not settle is released.
 */
export const runTask = <A, E, R>(
  task: TaskRecord,
  request: LlmRequest,
  payer: Payer,
  record: (run: AgentRun, settle: Effect.Effect<number>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const config = yield* SchedulerConfig
    const credits = yield* Credits
    const bills: Array<Bill> = []
    const last = { stopReason: null as StopReason | null, model: request.model }
    const settle = Effect.map(
      Effect.forEach(bills, (bill) => bill.spent === undefined ? Effect.succeed(0) : credits.settle(bill.hold, bill.spent)),
      (charges) => charges.reduce((sum, charge) => sum + charge, 0)
    )
    const run = Effect.gen(function*() {
      const tools = yield* toolsFor(task)
      let output = ""
      let usage = { inputTokens: 0, outputTokens: 0 }
      yield* Stream.runForEach(
        runAgent({ request, tools, maxRounds: config.maxRounds, maxMillis: config.runTimeoutMs, call: heldRounds(payer, bills, last) }),
        (event) =>
          Effect.sync(() => {
            if (event.type === "assistant") output = event.text
            if (event.type === "finished") usage = event.usage
          })
      )
      const done: AgentRun = { status: "succeeded", model: last.model, output, error: null, ...usage, stopReason: last.stopReason }
      return done
    }).pipe(
      Effect.catch((error) => {
        const spent = bills.flatMap((bill) => bill.spent === undefined ? [] : [bill.spent])
        const failed: AgentRun = {
          status: "failed",
          model: last.model,
          output: null,
          error: failureOf(error),
          inputTokens: spent.reduce((sum, item) => sum + (item.inputTokens ?? 0), 0),
          outputTokens: spent.reduce((sum, item) => sum + (item.outputTokens ?? 0), 0),
          stopReason: null
        }
        return Effect.succeed(failed)
      })
    )
    return yield* Effect.flatMap(run, (outcome) => record(outcome, settle)).pipe(
      Effect.ensuring(Effect.forEach(bills, (bill) => credits.release(bill.hold), { discard: true }))
    )
  })
