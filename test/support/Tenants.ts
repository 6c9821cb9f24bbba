import { Effect } from "effect"
import * as Admin from "../../src/admin/Admin.ts"
import type { CompanyRole } from "../../src/companies/CompaniesRepo.ts"
import { client } from "./TestServer.ts"

let memberCounter = 0

/** Another person in a tenant's company, with the given role and a personal access key. */
export const seedMember = (companyId: string, role: CompanyRole) =>
  Effect.gen(function*() {
    const user = yield* Admin.createUser({ email: `member-${process.pid}-${Date.now()}-${memberCounter++}@example.com` })
    yield* Admin.addCompanyUser(companyId, { userId: user.id, role })
    const key = yield* Admin.createPersonalKey(user.id, { name: "test" })
    return { userId: user.id, personalAccessKey: key.key }
  }).pipe(Effect.orDie)

/** The typed client acting as a person (personal access key) in a company. */
export const personClient = (personalAccessKey: string, companyId: string) =>
  client({ apiKey: personalAccessKey, companyId })
