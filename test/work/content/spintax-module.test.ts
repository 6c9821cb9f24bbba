import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { escapeHtml, render } from "../../../src/outreach/messages/MergeFields.ts"
import {
  countGroups,
  countVariants,
  expand,
  format,
  maxSpintaxDepth,
  mergeFieldNames,
  parse,
  seededRandom,
  type SpintaxSyntaxError,
  type Template
} from "../../../src/work/content/Spintax.ts"

const parsed = (source: string): Template => Result.getOrThrow(parse(source))
const failure = (source: string): SpintaxSyntaxError => {
  const result = parse(source)
  if (Result.isSuccess(result)) return expect.fail(`expected ${JSON.stringify(source.slice(0, 40))} to be rejected`)
  return result.failure
}

describe("Spintax.parse", () => {
  it("reads groups, merge fields with fallbacks and plain text", () => {
    const template = parsed("{{RANDOM | Hi | Hello}} {{ firstName | there }}, {x} a|b")
    expect(template).toEqual([
      { _tag: "Random", position: 0, options: [[{ _tag: "Text", text: "Hi" }], [{ _tag: "Text", text: "Hello" }]] },
      { _tag: "Text", text: " " },
      { _tag: "MergeField", name: "firstName", fallback: "there", source: "{{ firstName | there }}", position: 24 },
      { _tag: "Text", text: ", {x} a|b" }
    ])
  })

  it("accepts merge fields and groups nested in options, and empty options", () => {
    const template = parsed("{{RANDOM | Hi {{firstName}} | {{RANDOM | Hey | Yo}} there | }}!")
    expect(countGroups(template)).toBe(2)
    expect(countVariants(template)).toBe(4)
    expect(mergeFieldNames(template)).toEqual(["firstName"])
    expect(format(template)).toBe("{{RANDOM | Hi {{firstName}} | {{RANDOM | Hey | Yo}} there | }}!")
  })

  it("names the line and column of unbalanced braces", () => {
    expect(failure("Hello\n  {{RANDOM | a | b").message).toBe(
      "Unclosed \"{{RANDOM\" at line 2, column 3 (character 9)"
    )
    expect(failure("Hi}} there")).toMatchObject({ position: 2, line: 1, column: 3 })
    expect(failure("Hi {{firstName there").message).toContain("line 1, column 4")
    expect(failure("{{RANDOM}}").message).toContain("needs options")
    expect(failure("{{}}").message).toContain("Invalid merge field")
  })

  it("caps nesting depth", () => {
    const deep = "{{RANDOM | a | ".repeat(maxSpintaxDepth + 1) + "}}".repeat(maxSpintaxDepth + 1)
    expect(failure(deep).message).toContain(`deeper than ${maxSpintaxDepth}`)
    const allowed = "{{RANDOM | a | ".repeat(maxSpintaxDepth) + "b" + "}}".repeat(maxSpintaxDepth)
    expect(countVariants(parsed(allowed))).toBe(maxSpintaxDepth + 1)
  })

  it("stays linear on hostile input", () => {
    // Each is the classic quadratic trap of a scanner that searches again from every "{{".
    expect(failure("{{a".repeat(200_000)).position).toBe(0)
    expect(parsed("{x} |".repeat(200_000)).length).toBe(1)
    expect(failure("{{RANDOM | " + "|".repeat(500_000)).position).toBe(0)
    expect(countGroups(parsed("{{RANDOM | a | b}}".repeat(50_000)))).toBe(50_000)
  })
})

describe("Spintax.expand", () => {
  const template = parsed("{{RANDOM | Hi | Hello | Hey}} {{firstName}}, {{RANDOM | see {{RANDOM | you | ya}} | bye}}")

  it("is reproducible for a seed and covers every variant across seeds", () => {
    const variants = new Set<string>()
    for (let recipient = 0; recipient < 400; recipient++) {
      const seed = `cmp_1:rcp_${recipient}`
      const text = expand(template, seededRandom(seed))
      expect(expand(template, seededRandom(seed))).toBe(text)
      expect(text).toContain("{{firstName}}")
      variants.add(text)
    }
    expect(variants.size).toBe(countVariants(template))
  })
})

describe("MergeFields.render", () => {
  const random = seededRandom("x")

  it("fills fields by exact then normalised name, with fallbacks for missing values", () => {
    const rendered = render("{{first_name}} {{LastName}} <{{email}}> {{company | your team}} {{city}}.", {
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      company: ""
    }, { html: false, random })
    expect(rendered).toEqual(Result.succeed("Ada Lovelace <ada@example.com> your team."))
  })

  it("escapes values (not the template) in HTML and never parses values as syntax", () => {
    const rendered = render("<a title=\"{{name}}\">{{RANDOM | Hi | Hi}} {{name}}</a>", {
      name: "<b>\"Tom\" & {{RANDOM | x | y}}</b>"
    }, { html: true, random })
    const escaped = escapeHtml("<b>\"Tom\" & {{RANDOM | x | y}}</b>")
    expect(rendered).toEqual(Result.succeed(`<a title="${escaped}">Hi ${escaped}</a>`))
    expect(escaped).not.toMatch(/[<>"]/)
  })

  it("renders numbers and booleans and fails on malformed syntax", () => {
    expect(render("{{count}} {{vip}}", { count: 3, vip: true }, { html: false, random })).toEqual(
      Result.succeed("3 true")
    )
    expect(Result.isFailure(render("{{RANDOM | a", {}, { html: false, random }))).toBe(true)
  })
})
