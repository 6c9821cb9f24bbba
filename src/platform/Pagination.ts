import { Schema } from "effect"

/** A 1-based page number. */
export const PageNumber = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/** A page size between 1 and `maximum`; out-of-range sizes are rejected, never clamped. */
export const PageSize = (maximum: number) => Schema.Int.check(Schema.isBetween({ minimum: 1, maximum }))

/** Query fields of the generic list endpoints (`page` default 1, `pageSize` 1–100 default 10). */
export const PageQuery = {
  page: Schema.optional(PageNumber),
  pageSize: Schema.optional(PageSize(100))
}

export interface PageRequest {
  readonly page: number
  readonly pageSize: number
}

export const pageRequest = (
  query: { readonly page?: number | undefined; readonly pageSize?: number | undefined },
  defaultPageSize = 10
): PageRequest => ({ page: query.page ?? 1, pageSize: query.pageSize ?? defaultPageSize })

export const offsetOf = (request: PageRequest): number => (request.page - 1) * request.pageSize

/** The generic list envelope of the spec. */
export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    items: Schema.Array(item),
    total: Schema.Int,
    pages: Schema.Int,
    hasNext: Schema.Boolean
  })

export const pageCount = (total: number, pageSize: number): number => Math.ceil(total / pageSize)

export const toPage = <A>(items: ReadonlyArray<A>, total: number, request: PageRequest) => ({
  items,
  total,
  pages: pageCount(total, request.pageSize),
  hasNext: request.page * request.pageSize < total
})
