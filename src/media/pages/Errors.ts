import { refusal } from "../../platform/Refusal.ts"

/** No landing page with this id in the caller's company. */
export class PageNotFound extends refusal(
  "NotFound",
  "PageNotFound",
  ({ id }: { readonly id: string }) => `Landing page ${id} not found`
) {}

/** No saved body version with this number. */
export class PageVersionNotFound extends refusal(
  "NotFound",
  "PageVersionNotFound",
  ({ id, version }: { readonly id: string; readonly version: number }) => `Version ${version} of landing page ${id} not found`
) {}

/** Another page of the company has the slug. */
export class SlugTaken extends refusal(
  "Invalid",
  "SlugTaken",
  ({ slug }: { readonly slug: string }) => `Invalid request body field "slug": another landing page of the company is at "${slug}"`
) {}

/** Nothing published at this public address. */
export class NotPublished extends refusal("NotFound", "NotPublished", (_: {}) => "Page not found") {}

/** A submission the page cannot take; the message names the field. */
export class InvalidSubmission extends refusal(
  "Invalid",
  "InvalidSubmission",
  ({ field, problem }: { readonly field: string; readonly problem: string }) => `Invalid form field "${field}": ${problem}`
) {}

/** Too many submissions from one address to one page. */
export class TooManySubmissions extends refusal(
  "Limited",
  "TooManySubmissions",
  ({ retryAfterSeconds }: { readonly retryAfterSeconds: number }) =>
    `Too many submissions from your address; try again in ${retryAfterSeconds} s`
) {}
