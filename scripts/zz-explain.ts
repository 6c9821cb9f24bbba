import { Console, Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Admin from "/work/wt/leads/src/admin/Admin.ts"
import { inMemoryStorage } from "/work/wt/leads/src/app/Storage.ts"
import { Leads, toUpsert } from "/work/wt/leads/src/leads/Leads.ts"
import { LeadsRepo } from "/work/wt/leads/src/leads/LeadsRepo.ts"
const rows = 100_000
const main = Effect.gen(function*() {
  const { companyId } = yield* Admin.bootstrap({ organization: "B", company: "B", email: `b-${Date.now()}@example.com` })
  const repo = yield* LeadsRepo
  const leads = yield* Leads
  const sql = yield* SqlClient.SqlClient
  const now = new Date()
  for (let start = 0; start < rows; start += 5_000) {
    const batch = Array.from({ length: 5_000 }, (_, j) => { const i = start + j; return toUpsert(companyId, { email: `lead${i}@example.com`, tags: i % 3 === 0 ? ["vip"] : ["cold"] }) })
    yield* repo.upsert(batch, "fill", now)
    const events = batch.filter((_, j) => (start + j) % 2 === 0).flatMap((lead, j) => [
      { companyId, type: "sent" as const, at: new Date(now.getTime() - 40 * 86_400_000), contact: { email: lead.email } },
      ...(j % 5 === 0 ? [{ companyId, type: "opened" as const, at: new Date(now.getTime() - (j % 10 === 0 ? 2 : 60) * 86_400_000), contact: { email: lead.email } }] : [])])
    yield* leads.record(events)
  }
  const since = new Date(now.getTime() - 30 * 86_400_000)
  const variants: Record<string, any> = {
    exists: sql`SELECT count(*) FROM leads WHERE company_id = ${companyId} AND status = 'contacted' AND tags @> '["vip"]'::jsonb AND EXISTS (SELECT 1 FROM lead_activities a WHERE a.lead_id = leads.id AND a.type = 'opened' AND a.at >= ${since})`,
    inCompany: sql`SELECT count(*) FROM leads WHERE company_id = ${companyId} AND status = 'contacted' AND tags @> '["vip"]'::jsonb AND leads.id IN (SELECT a.lead_id FROM lead_activities a WHERE a.company_id = ${companyId} AND a.type = 'opened' AND a.at >= ${since})`,
  }
  const run = (label: string) => Effect.gen(function*() {
    for (const [name, q] of Object.entries(variants)) {
      for (let k = 0; k < 3; k++) { const t = performance.now(); yield* q; if (k === 2) yield* Console.log(`${label} ${name}: ${(performance.now() - t).toFixed(0)} ms`) }
    }
  })
  yield* run("plain")
  yield* sql.unsafe(`CREATE INDEX lead_activities_company_type ON lead_activities (company_id, type, at)`)
  yield* run("with index")
  yield* sql.unsafe(`ANALYZE`)
  yield* run("analyzed")
  const plan = yield* sql.unsafe(`EXPLAIN ANALYZE SELECT count(*) FROM leads WHERE company_id = '${companyId}' AND status = 'contacted' AND tags @> '["vip"]'::jsonb AND EXISTS (SELECT 1 FROM lead_activities a WHERE a.lead_id = leads.id AND a.type = 'opened' AND a.at >= '${since.toISOString()}')`)
  for (const r of plan as any) yield* Console.log(r["QUERY PLAN"])
})
Effect.runPromise(Effect.provide(main, inMemoryStorage)).then(() => process.exit(0))
