import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { fromOpenApi, search, words } from "../../../src/models/mcp/Catalog.ts"
import { makeTools } from "../../../src/models/mcp/Tools.ts"

/**
 * The catalog of an API the MCP code has never heard of: whatever an
 * `HttpApi` declares is browsable, described and searchable, with no MCP change.
 */
interface Part {
  readonly name: string
  readonly parts: ReadonlyArray<Part>
}

const Part: Schema.Codec<Part> = Schema.Struct({
  name: Schema.String,
  parts: Schema.Array(Schema.suspend((): Schema.Codec<Part> => Part))
}).annotate({ identifier: "Part" })

const Widget = Schema.Struct({ id: Schema.String, name: Schema.String, root: Part }).annotate({ identifier: "Widget" })

class WidgetsApi extends HttpApiGroup.make("widgets").add(
  HttpApiEndpoint.get("list", "/widgets", { query: { search: Schema.optional(Schema.String) }, success: Schema.Array(Widget) })
    .annotate(OpenApi.Summary, "List the widgets"),
  HttpApiEndpoint.post("assemble", "/widgets", { payload: Schema.Struct({ name: Schema.String, root: Part }), success: Widget })
    .annotate(OpenApi.Summary, "Assemble a widget from parts"),
  HttpApiEndpoint.get("get", "/widgets/:widgetId", { params: { widgetId: Schema.String }, success: Widget }),
  HttpApiEndpoint.post("upload", "/widgets/photos", {
    payload: Schema.Struct({ file: Multipart.SingleFileSchema }).pipe(HttpApiSchema.asMultipart()),
    success: Widget
  })
).annotate(OpenApi.Description, "Widgets of the shop. Each is a tree of parts.").prefix("/api/v0") {}

class AdminApi extends HttpApiGroup.make("admin").add(HttpApiEndpoint.post("wipe", "/admin/wipe")) {}
class McpApi extends HttpApiGroup.make("mcp").add(HttpApiEndpoint.get("info", "/mcp/info")) {}

const catalog = fromOpenApi(OpenApi.fromApi(HttpApi.make("shop").add(WidgetsApi).add(AdminApi).add(McpApi)))
const operation = (id: string) => catalog.operations.get(id)!

describe("the MCP catalog", () => {
  it("has a category per group, without the operator and MCP groups", () => {
    expect(catalog.categories.map((category) => [category.name, category.description, category.operations.length])).toEqual([
      ["widgets", "Widgets of the shop.", 4]
    ])
    expect([...catalog.operations.keys()]).toEqual(["widgets.list", "widgets.assemble", "widgets.get", "widgets.upload"])
  })

  it("describes each operation from the OpenAPI document, every $ref resolved", () => {
    expect(operation("widgets.list")).toMatchObject({
      method: "GET",
      path: "/api/v0/widgets",
      summary: "List the widgets",
      readOnly: true,
      queryParameters: [{ name: "search", required: false }],
      body: undefined
    })
    expect(operation("widgets.get")).toMatchObject({
      summary: "GET /api/v0/widgets/{widgetId}",
      pathParameters: [{ name: "widgetId", required: true, schema: { type: "string" } }]
    })
    const assemble = operation("widgets.assemble")
    expect(assemble).toMatchObject({ method: "POST", readOnly: false, multipart: false, body: { fields: ["name", "root"] } })
    // A recursive schema is inlined once, then refers to its own definition.
    const body = JSON.stringify(assemble.body?.schema)
    expect(body).not.toContain("#/components")
    expect(assemble.body?.schema).toMatchObject({
      properties: { root: { properties: { parts: { items: { $ref: "#/$defs/Part" } } } } },
      $defs: { Part: { properties: { name: { type: "string" } } } }
    })
    expect(JSON.stringify(assemble.response.schema)).not.toContain("#/components")
  })

  it("ranks operations by keywords, singular or plural, prefixes at half weight", () => {
    expect(words("scheduledTasks_listExecutions")).toEqual(["scheduled", "task", "list", "execution"])
    expect(words("Companies")).toEqual(["company"])
    const all = [...catalog.operations.values()]
    expect(search(all, "assemble widgets", 5).map((found) => found.operationId)[0]).toBe("widgets.assemble")
    expect(search(all, "assem", 5).map((found) => found.operationId)).toEqual(["widgets.assemble"])
    expect(search(all, "list", 1).map((found) => found.operationId)).toEqual(["widgets.list"])
    expect(search(all, "nothing matches this", 5)).toEqual([])
    expect(search(all, "  ", 5)).toEqual([])
  })

  it.effect("describes a multipart upload, and refuses to execute it, pointing to REST", () =>
    Effect.gen(function*() {
      expect(operation("widgets.upload")).toMatchObject({ multipart: true, body: undefined })
      const tools = makeTools(catalog, () => Effect.die("a multipart operation must not be executed"))
      const details = yield* tools.call("platform_get_action_details", { operationId: "widgets.upload" }, {})!
      expect(details.structuredContent).toMatchObject({ execution: expect.stringMatching(/multipart file upload/) })
      const refused = yield* tools.call("platform_execute_action", { operationId: "widgets.upload" }, {})!
      expect(refused).toMatchObject({
        isError: true,
        structuredContent: { status: 400, error: expect.stringMatching(/multipart file upload.*POST \/api\/v0\/widgets\/photos over REST/) }
      })
      expect(tools.call("platform_unknown", {}, {})).toBeUndefined()
    }))
})
