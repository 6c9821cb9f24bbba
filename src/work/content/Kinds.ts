/** What the content engine writes (`POST /content/generate`): the kinds and lengths, and one request. */

export const contentKinds = ["email", "subject_lines", "social_post", "blog_post", "ad_copy", "landing_copy"] as const
export type ContentKind = (typeof contentKinds)[number]
export const contentLengths = ["short", "medium", "long"] as const
export type ContentLength = (typeof contentLengths)[number]

export interface WritingRequest {
  readonly kind: ContentKind
  readonly brief: string
  readonly tone?: string | undefined
  readonly length: ContentLength
}
