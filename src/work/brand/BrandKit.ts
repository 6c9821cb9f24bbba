import { Effect, Option } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { publicUrl } from "../../media/files/Files.ts"
import { FilesRepo } from "../../media/files/FilesRepo.ts"
import { currentDate } from "../../platform/Time.ts"
import type { BrandKit, BrandKitInput } from "./Api.ts"
import { type BrandKitRecord, BrandKitRepo } from "./BrandKitRepo.ts"
import { UnknownLogoFile } from "./Errors.ts"

/**
 * The brand kit: one per company, replaced whole by PUT. What writes for the
 * company reads it through `brandGuide`: a prompt section for the model and
 * the colours and fonts as CSS variables for HTML work (docs/brand-kit.md).
 */

export type BrandKitView = typeof BrandKit.Type

const emptyKit = (companyId: string): BrandKitView => ({
  companyId,
  name: null,
  logoFileId: null,
  logoUrl: null,
  colors: {},
  fonts: {},
  voice: {},
  links: {},
  updated: null
})

/** The logo's public URL while the file exists (a deleted upload leaves the kit without one). */
const logoUrlOf = (record: BrandKitRecord) =>
  record.logoFileId === null
    ? Effect.succeed(null)
    : Effect.flatMap(FilesRepo.use((repo) => repo.get(record.logoFileId!)), (file) =>
      Option.isSome(file) && file.value.companyId === record.companyId ? publicUrl(file.value) : Effect.succeed(null))

const toView = (record: BrandKitRecord) =>
  Effect.map(logoUrlOf(record), (logoUrl): BrandKitView => ({
    companyId: record.companyId,
    name: record.name,
    logoFileId: record.logoFileId,
    logoUrl,
    colors: record.colors,
    fonts: record.fonts,
    voice: record.voice,
    links: record.links,
    updated: record.updatedAt.getTime()
  }))

/** The company's kit, empty before the first PUT; for features that write for the company (no permission check). */
export const brandKitOf = (companyId: string) =>
  Effect.flatMap(BrandKitRepo.use((repo) => repo.get(companyId)), (found) =>
    Option.match(found, { onNone: () => Effect.succeed(emptyKit(companyId)), onSome: toView }))

export const get = Effect.fn("BrandKit.get")(function*(companyId: string | undefined) {
  yield* Authorized("brandKit:read")
  const principal = yield* requireCompany(companyId)
  return yield* brandKitOf(principal.companyId)
})

export const put = Effect.fn("BrandKit.put")(function*(input: typeof BrandKitInput.Type) {
  yield* Authorized("brandKit:write")
  const principal = yield* requireCompany(input.companyId)
  const logoFileId = input.logoFileId ?? null
  if (logoFileId !== null) {
    const file = yield* FilesRepo.use((repo) => repo.get(logoFileId))
    if (Option.isNone(file) || file.value.companyId !== principal.companyId) return yield* new UnknownLogoFile({ id: logoFileId })
  }
  const now = yield* currentDate
  const saved = yield* BrandKitRepo.use((repo) =>
    repo.put({
      companyId: principal.companyId,
      name: input.name ?? null,
      logoFileId,
      colors: input.colors ?? {},
      fonts: input.fonts ?? {},
      voice: input.voice ?? {},
      links: input.links ?? {},
      updatedAt: now
    })
  )
  return yield* toView(saved)
})
