import { expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { UsageConfig } from "../../src/accounts/usage/UsageConfig.ts"

const settingsFrom = (env: Record<string, string>) => UsageConfig.fromEnv.parse(ConfigProvider.fromEnvRecord(env))

it.effect("groups settled calls for 5 ms on PostgreSQL and 50 ms on the embedded database, unless CREDIT_FLUSH_MS says", () =>
  Effect.gen(function*() {
    expect((yield* settingsFrom({ DATABASE_URL: "postgres://localhost/platform" })).flushMs).toBe(5)
    expect((yield* settingsFrom({})).flushMs).toBe(50)
    expect((yield* settingsFrom({ CREDIT_FLUSH_MS: "20" })).flushMs).toBe(20)
    const refused = yield* Effect.flip(settingsFrom({ CREDIT_FLUSH_MS: "0" }))
    expect(String(refused)).toContain("CREDIT_FLUSH_MS")
  }))
