import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as HtmlEdits from "../../../src/work/design/HtmlEdits.ts"

const page = "<table role=\"presentation\"><tr><td><h1>Title</h1><p class=\"a\">One {{firstName}}</p><p>{Hi|Hello}</p></td></tr></table>"

const html = (result: Result.Result<{ readonly html: string; readonly matched: number }, string>) =>
  Result.getOrThrow(result).html

const failure = (result: Result.Result<unknown, string>) => Result.isFailure(result) ? result.failure : "succeeded"

describe("HTML edits", () => {
  it("edit every element a selector matches, keeping merge fields and spintax", () => {
    expect(html(HtmlEdits.setText(page, "h1", "New <b>&"))).toContain("<h1>New &lt;b&gt;&amp;</h1>")
    expect(Result.getOrThrow(HtmlEdits.setAttribute(page, "p", "style", "color:red")).matched).toBe(2)
    expect(html(HtmlEdits.removeElement(page, "p.a"))).toBe("<table role=\"presentation\"><tr><td><h1>Title</h1><p>{Hi|Hello}</p></td></tr></table>")
    expect(html(HtmlEdits.replaceHtml(page, "h1", "<h2>Sub</h2>"))).toContain("<td><h2>Sub</h2><p class=\"a\">One {{firstName}}</p>")
    expect(html(HtmlEdits.insertHtml(page, "h1", "after", "<hr><p>x</p>"))).toContain("<h1>Title</h1><hr><p>x</p><p class=\"a\">")
    expect(html(HtmlEdits.insertHtml(page, "h1", "before", "<br>"))).toContain("<td><br><h1>")
    expect(html(HtmlEdits.insertHtml(page, "td", "start", "<i>a</i><i>b</i>"))).toContain("<td><i>a</i><i>b</i><h1>")
    expect(html(HtmlEdits.insertHtml(page, "td", "end", "<i>z</i>"))).toContain("{Hi|Hello}</p><i>z</i></td>")
    expect(html(HtmlEdits.removeAttribute(page, "table", "role"))).toMatch(/^<table><tr>/)
    expect(html(HtmlEdits.setText(page, "p.a", "Dear {{ firstName }}"))).toContain("<p class=\"a\">Dear {{ firstName }}</p>")
  })

  it("a selector that matches nothing or does not parse, or HTML that is not well-formed, is an error naming it", () => {
    expect(failure(HtmlEdits.setText(page, "h3", "x"))).toContain("No element matches \"h3\"")
    expect(failure(HtmlEdits.setText(page, "p[", "x"))).toContain("Invalid CSS selector \"p[\"")
    expect(failure(HtmlEdits.replaceHtml(page, "h1", "<div><p>open"))).toContain("not well-formed")
    expect(failure(HtmlEdits.insertHtml(page, "h1", "after", "<table><tr><td>x</table>"))).toContain("not well-formed")
  })

  it("reads the document or the parts a selector matches", () => {
    expect(Result.getOrThrow(HtmlEdits.read(page, undefined))).toBe(page)
    expect(Result.getOrThrow(HtmlEdits.read(page, "p"))).toBe("<p class=\"a\">One {{firstName}}</p>\n<p>{Hi|Hello}</p>")
  })

  it("the preheader is a hidden element at the start of the body, created once and then updated", () => {
    const first = html(HtmlEdits.setPreheader("<html><body><p>x</p></body></html>", "Preview"))
    expect(first).toMatch(/^<html><body><div data-preheader style="display:none;[^"]*">Preview<\/div><p>x<\/p>/)
    const second = html(HtmlEdits.setPreheader(first, "Again"))
    expect(second.match(/data-preheader/g)).toHaveLength(1)
    expect(second).toContain(">Again</div>")
  })
})
