import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { seededRandom } from "../../../src/work/content/Spintax.ts"
import { render } from "../../../src/outreach/messages/MergeFields.ts"

const text = (source: string, values: Record<string, string> = {}) =>
  render(source, values, { html: false, random: seededRandom("merge") })

describe("merge fields: the whitespace a missing field leaves", () => {
  it("collapses a double space, and the space before punctuation", () => {
    expect(text("Hi {{firstName}} there")).toEqual(Result.succeed("Hi there"))
    expect(text("Hi {{firstName}}, welcome")).toEqual(Result.succeed("Hi, welcome"))
    expect(text("Dear {{title}} {{lastName}} Smith")).toEqual(Result.succeed("Dear Smith"))
  })

  it("leaves present values, fallbacks and line breaks alone", () => {
    expect(text("Hi {{firstName}} there", { firstName: "Ada" })).toEqual(Result.succeed("Hi Ada there"))
    expect(text("Hi {{firstName | friend}} there")).toEqual(Result.succeed("Hi friend there"))
    expect(text("Hi {{firstName}}\nthere")).toEqual(Result.succeed("Hi \nthere"))
    expect(text("{{firstName}} there")).toEqual(Result.succeed(" there"))
  })
})
