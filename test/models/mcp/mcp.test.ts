import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { callTool, mcpClient, rawRequest } from "../../support/Mcp.ts"
import { addPerson, backends, pgliteStorage, seedTenant } from "../../support/TestServer.ts"

const rest = (method: string, path: string, apiKey: string, body?: unknown) =>
  rawRequest(method, `/api/v0${path}`, { headers: { "x-api-key": apiKey }, body: body === undefined ? undefined : JSON.stringify(body) })

/** A JSON-RPC message posted to the MCP endpoint as the SDK would, with extra headers. */
const rpc = (message: unknown, headers: Record<string, string>) =>
  rawRequest("POST", "/api/v0/mcp", {
    body: typeof message === "string" ? message : JSON.stringify(message),
    headers: { accept: "application/json, text/event-stream", ...headers }
  })

const structured = (result: { readonly structuredContent?: unknown }) => result.structuredContent as Record<string, any>

describe.each(backends)("the MCP server through the official SDK on $name", ({ storage }) => {
  it.layer(loopbackServer(storage), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("initializes statelessly and lists exactly three tools", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-init")
        const { client, transport } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        expect(client.getServerVersion()).toMatchObject({ name: "platform-api", version: "1.0.0" })
        expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } })
        expect(transport.protocolVersion).toBe("2025-11-25")
        expect(transport.sessionId).toBeUndefined()
        expect(client.getInstructions()).toMatch(/platform_list_capabilities/)
        yield* Effect.promise(() => client.ping())
        const { tools } = yield* Effect.promise(() => client.listTools())
        expect(tools.map((tool) => tool.name)).toEqual([
          "platform_list_capabilities",
          "platform_get_action_details",
          "platform_execute_action"
        ])
        for (const tool of tools) {
          expect(tool.inputSchema.type).toBe("object")
          expect(tool.description).toMatch(/Example: \{/)
        }
        expect(tools[0].inputSchema).toMatchObject({ additionalProperties: false, properties: { category: { type: "string" }, query: { type: "string" } } })
        expect(tools[1].inputSchema).toMatchObject({ required: ["operationId"], additionalProperties: false })
        expect(tools[2].inputSchema).toMatchObject({ required: ["operationId"], additionalProperties: true })
        expect(tools[0].annotations).toMatchObject({ readOnlyHint: true })
      })))

    it.effect("browses categories, one category, and ranks operations by keywords", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-browse")
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const categories = structured(yield* callTool(client, "platform_list_capabilities", {})).categories
        const names = categories.map((category: { name: string }) => category.name)
        expect(names).toEqual(expect.arrayContaining(["projects", "organizations", "memories", "agents", "chat"]))
        expect(names).not.toContain("admin")
        expect(names).not.toContain("mcp")
        // Each category is an OpenAPI tag: its description's first sentence, and as many operations as it has.
        const openapi = (yield* rawRequest("GET", "/api/v0/openapi.json")).body
        const tag = openapi.tags.find((item: { name: string }) => item.name === "projects")
        const projectOperations = Object.values<Record<string, { tags: Array<string> }>>(openapi.paths)
          .flatMap((item) => Object.values(item))
          .filter((operation) => operation.tags[0] === "projects")
        const projects = categories.find((category: { name: string }) => category.name === "projects")
        expect(projects).toEqual({
          name: "projects",
          operations: projectOperations.length,
          description: tag.description?.split(/\.(\s|$)/)[0].concat(".") ?? expect.stringMatching(/^Operations: /)
        })

        const listing = structured(yield* callTool(client, "platform_list_capabilities", { category: "projects" }))
        expect(listing.operations).toContainEqual({
          operationId: "projects_update",
          method: "PATCH",
          path: "/api/v0/projects/{project_id}",
          summary: expect.any(String),
          readOnly: false
        })
        expect(listing.operations.find((operation: any) => operation.operationId === "projects_list").readOnly).toBe(true)

        const found = structured(yield* callTool(client, "platform_list_capabilities", { query: "update project" }))
        expect(found.operations[0].operationId).toBe("projects_update")
        const tasks = structured(yield* callTool(client, "platform_list_capabilities", { query: "pause scheduled task" }))
        expect(tasks.operations[0].operationId).toBe("scheduledTasks_pause")

        const typo = yield* callTool(client, "platform_list_capabilities", { categry: "projects" })
        expect(structured(typo).error).toMatch(/categry/)

        const unknown = yield* callTool(client, "platform_list_capabilities", { category: "nope" })
        expect(unknown.isError).toBe(true)
        expect(structured(unknown).error).toMatch(/Unknown category "nope": one of .*projects/)
      })))

    it.effect("describes an operation: flat arguments, body fields, response and errors", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-details")
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const details = structured(yield* callTool(client, "platform_get_action_details", { operationId: "projects_update" }))
        expect(details).toMatchObject({
          operationId: "projects_update",
          category: "projects",
          method: "PATCH",
          path: "/api/v0/projects/{project_id}",
          readOnly: false,
          pathParameters: ["project_id"],
          bodyFields: expect.arrayContaining(["name", "description", "sharing"]),
          response: { status: 200, contentTypes: ["application/json"] },
          example: { operationId: "projects_update", project_id: "<project_id>" }
        })
        expect(details.arguments.required).toEqual(["project_id"])
        expect(details.arguments.properties.sharing).toMatchObject({ anyOf: expect.anything() })
        // `$ref`s are resolved from the components: the response is the Project schema itself.
        expect(details.response.schema.properties).toHaveProperty("companyId")
        expect(JSON.stringify(details)).not.toContain("#/components")
        expect(details.errors.map((error: { status: number }) => error.status)).toEqual(expect.arrayContaining([400, 401, 403, 404]))
      })))

    it.effect("executes a read: the organizations list is the REST answer", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-read")
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const result = yield* callTool(client, "platform_execute_action", { operationId: "organizations_list" })
        const direct = yield* rest("GET", "/organizations", tenant.apiKey)
        expect(direct.status).toBe(200)
        expect(result.isError).toBeFalsy()
        expect(result.structuredContent).toEqual(direct.body)
        expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual(direct.body)
      })))

    it.effect("executes a write with a company key and with a personal access key plus X-Company-ID", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-write")
        const created = yield* rest("POST", "/projects", tenant.apiKey, { name: "Launch" })
        const projectId = created.body.id
        const company = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const renamed = yield* callTool(company.client, "platform_execute_action", {
          operationId: "projects_update",
          project_id: projectId,
          name: "Launch v2",
          description: "Now with MCP"
        })
        expect(renamed.isError).toBeFalsy()
        expect(structured(renamed)).toMatchObject({ id: projectId, name: "Launch v2", description: "Now with MCP" })
        expect((yield* rest("GET", `/projects/${projectId}`, tenant.apiKey)).body).toEqual(renamed.structuredContent)

        const personal = yield* mcpClient({ Authorization: `Bearer ${tenant.personalAccessKey}`, "X-Company-ID": tenant.companyId })
        const again = yield* callTool(personal.client, "platform_execute_action", {
          operationId: "projects_update",
          project_id: projectId,
          sharing: "Private"
        })
        expect(structured(again)).toMatchObject({ id: projectId, name: "Launch v2", sharing: "Private" })
        const me = yield* callTool(personal.client, "platform_execute_action", { operationId: "me_get" })
        expect(structured(me)).toMatchObject({ keyKind: "personal", userId: tenant.userId, companyId: tenant.companyId })
      })))

    it.effect("runs with the caller's own rights: another company's project is 404, a viewer's write is 403", () =>
      Effect.scoped(Effect.gen(function*() {
        const owner = yield* seedTenant("mcp-owner")
        const stranger = yield* seedTenant("mcp-stranger")
        const projectId = (yield* rest("POST", "/projects", owner.apiKey, { name: "Secret" })).body.id
        const { client } = yield* mcpClient({ "X-API-Key": stranger.apiKey })
        const refused = yield* callTool(client, "platform_execute_action", {
          operationId: "projects_update",
          project_id: projectId,
          name: "Taken"
        })
        expect(refused.isError).toBe(true)
        expect(structured(refused)).toEqual({ status: 404, error: expect.stringContaining(projectId) })
        expect((yield* rest("GET", `/projects/${projectId}`, owner.apiKey)).body.name).toBe("Secret")

        const viewer = yield* addPerson(owner, { companyRole: "viewer" })
        const asViewer = yield* mcpClient({ "X-API-Key": viewer.personalAccessKey, "X-Company-ID": owner.companyId })
        const forbidden = yield* callTool(asViewer.client, "platform_execute_action", {
          operationId: "projects_update",
          project_id: projectId,
          name: "Viewer edit"
        })
        expect(structured(forbidden).status).toBe(403)
      })))

    it.effect("bad arguments come back as error results naming the field", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-bad")
        const projectId = (yield* rest("POST", "/projects", tenant.apiKey, { name: "Launch" })).body.id
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const execute = (args: Record<string, unknown>) => callTool(client, "platform_execute_action", args)

        const wrongType = yield* execute({ operationId: "projects_update", project_id: projectId, name: 42 })
        expect(wrongType.isError).toBe(true)
        expect(structured(wrongType)).toEqual({ status: 400, error: expect.stringMatching(/"name"/) })

        const missingPath = yield* execute({ operationId: "projects_update", name: "x" })
        expect(structured(missingPath)).toEqual({ status: 400, error: expect.stringMatching(/Missing required argument "project_id"/) })

        const missingBody = yield* execute({ operationId: "projects_create" })
        expect(structured(missingBody)).toEqual({ status: 400, error: expect.stringMatching(/"name"/) })

        // The endpoint's own strict input names a misspelt body field, as over REST.
        const typo = yield* execute({ operationId: "projects_update", project_id: projectId, nmae: "x" })
        expect(structured(typo)).toEqual({ status: 400, error: expect.stringMatching(/nmae/) })

        const upload = yield* execute({ operationId: "documents_convert" })
        expect(structured(upload)).toEqual({ status: 400, error: expect.stringMatching(/multipart file upload.*over REST/) })

        const unknownArgument = yield* execute({ operationId: "projects_get", project_id: projectId, verbose: true })
        expect(structured(unknownArgument).error).toMatch(/Unknown argument "verbose" for projects_get/)

        const badQuery = yield* execute({ operationId: "projects_list", pageSize: 0 })
        expect(structured(badQuery)).toMatchObject({ status: 400, error: expect.stringMatching(/pageSize/) })

        const dotDot = yield* execute({ operationId: "projects_get", project_id: ".." })
        expect(structured(dotDot).error).toMatch(/must be an id/)

        const noOperation = yield* execute({ project_id: projectId })
        expect(noOperation.isError).toBe(true)
        expect(structured(noOperation).error).toMatch(/operationId/)
      })))

    it.effect("an unknown operationId, an operator operation or an MCP operation is refused with suggestions", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-unknown")
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        for (const operationId of ["projects_rename", "admin_bootstrap", "mcp_toolsCall"]) {
          const result = yield* callTool(client, "platform_execute_action", { operationId })
          expect(result.isError).toBe(true)
          expect(structured(result).error).toMatch(new RegExp(`Unknown operationId "${operationId}"`))
        }
        const suggestion = yield* callTool(client, "platform_get_action_details", { operationId: "projects_rename" })
        expect(structured(suggestion).error).toMatch(/similar: .*projects_/)
      })))

    it.effect("collects the events of a streaming operation", () =>
      Effect.scoped(Effect.gen(function*() {
        const tenant = yield* seedTenant("mcp-stream")
        const { client } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
        const result = yield* callTool(client, "platform_execute_action", {
          operationId: "chat_createCompletion",
          model: "local-fastest",
          messages: [{ role: "user", content: "Hello" }],
          stream: true
        })
        expect(result.isError).toBeFalsy()
        const { status, events, truncated } = structured(result)
        expect([status, truncated]).toEqual([200, false])
        expect(events.length).toBeGreaterThan(1)
        expect(events.at(-1)).toEqual({ event: "message", data: "[DONE]" })
        expect(events[0].data).toMatchObject({ object: "chat.completion.chunk" })
      })))

    it.effect("without valid credentials the endpoint answers 401 before any JSON-RPC", () =>
      Effect.gen(function*() {
        const failure = yield* Effect.flip(Effect.scoped(mcpClient({})))
        expect(failure).toMatchObject({ code: 401, message: expect.stringMatching(/Missing API key/) })
        const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }
        const missing = yield* rpc(initialize, {})
        expect([missing.status, missing.body]).toEqual([401, { error: expect.stringMatching(/Missing API key/) }])
        const invalid = yield* rpc("not even json", { "x-api-key": "sk_invalid" })
        expect([invalid.status, invalid.body]).toEqual([401, { error: "Invalid API key" }])
        const tenant = yield* seedTenant("mcp-pak")
        const withoutCompany = yield* rpc(initialize, { authorization: `Bearer ${tenant.personalAccessKey}` })
        expect(withoutCompany.status).toBe(401)
        for (const path of ["/api/v0/mcp/info", "/api/v0/mcp/tools/list"]) {
          expect((yield* rawRequest("GET", path)).status).toBe(401)
        }
      }))
  })
})

it.layer(loopbackServer(pgliteStorage), { timeout: 60_000, excludeTestServices: true })("the MCP JSON-RPC protocol and REST forms", (it) => {
  it.effect("answers JSON-RPC errors for malformed requests, unknown methods and unknown tools", () =>
    Effect.gen(function*() {
      const { apiKey } = yield* seedTenant("mcp-rpc")
      const auth = { "x-api-key": apiKey }
      const parseError = yield* rpc("{oops", auth)
      expect([parseError.status, parseError.body]).toEqual([400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } }])
      const batch = yield* rpc([{ jsonrpc: "2.0", id: 1, method: "ping" }], auth)
      expect([batch.status, batch.body.error.code]).toEqual([400, -32600])
      const noVersion = yield* rpc({ id: 1, method: "ping" }, auth)
      expect([noVersion.status, noVersion.body.error.code]).toEqual([400, -32600])
      const badId = yield* rpc({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }, auth)
      expect(badId.body.error.code).toBe(-32600)
      const unknownMethod = yield* rpc({ jsonrpc: "2.0", id: 7, method: "resources/list" }, auth)
      expect([unknownMethod.status, unknownMethod.body]).toEqual([200, { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: resources/list" } }])
      const unknownTool = yield* rpc({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "nope", arguments: {} } }, auth)
      expect(unknownTool.body).toEqual({ jsonrpc: "2.0", id: "a", error: { code: -32602, message: "Unknown tool: nope" } })
      const badArguments = yield* rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "platform_execute_action", arguments: [] } }, auth)
      expect(badArguments.body.error.code).toBe(-32602)
      const badProtocol = yield* rpc({ jsonrpc: "2.0", id: 3, method: "ping" }, { ...auth, "mcp-protocol-version": "1999-01-01" })
      expect([badProtocol.status, badProtocol.body.error.message]).toEqual([400, expect.stringMatching(/Unsupported MCP-Protocol-Version/)])
    }))

  it.effect("negotiates the protocol version, needs no session, acknowledges notifications with 202", () =>
    Effect.gen(function*() {
      const { apiKey } = yield* seedTenant("mcp-negotiate")
      const auth = { "x-api-key": apiKey }
      const initialize = (protocolVersion: string) =>
        rpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } } }, auth)
      expect((yield* initialize("2025-06-18")).body.result.protocolVersion).toBe("2025-06-18")
      const future = yield* initialize("2099-01-01")
      expect(future.body.result.protocolVersion).toBe("2025-11-25")
      expect(future.headers.get("mcp-session-id")).toBeNull()
      const notification = yield* rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, auth)
      expect([notification.status, notification.text]).toEqual([202, ""])
      // Any request works without an initialize before it: nothing is kept between requests.
      const list = yield* rpc({ jsonrpc: "2.0", id: 9, method: "tools/list" }, { ...auth, "mcp-protocol-version": "2025-03-26" })
      expect(list.body.result.tools).toHaveLength(3)
      for (const method of ["GET", "DELETE"]) {
        const refused = yield* rawRequest(method, "/api/v0/mcp", { headers: auth })
        expect([refused.status, refused.headers.get("allow")]).toEqual([405, "POST"])
      }
    }))

  it.effect("answers one server-sent event when the client accepts only text/event-stream", () =>
    Effect.gen(function*() {
      const { apiKey } = yield* seedTenant("mcp-sse")
      const base = yield* serverUrl
      const response = yield* Effect.promise(() =>
        fetch(`${base}/api/v0/mcp`, {
          method: "POST",
          headers: { "x-api-key": apiKey, accept: "text/event-stream", "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" })
        }))
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      const events: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (event) => void events.push(event) })
      parser.feed(yield* Effect.promise(() => response.text()))
      expect(events).toHaveLength(1)
      expect(events[0].event).toBe("message")
      expect(JSON.parse(events[0].data)).toEqual({ jsonrpc: "2.0", id: 5, result: {} })
    }))

  it.effect("REST forms: info, tools list and tools call answer the same data", () =>
    Effect.gen(function*() {
      const { apiKey, companyId, personalAccessKey } = yield* seedTenant("mcp-rest")
      const info = yield* rest("GET", "/mcp/info", apiKey)
      expect(info.body).toEqual({
        name: "platform-api",
        version: "1.0.0",
        protocolVersions: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        capabilities: { tools: { listChanged: false } },
        transport: "streamable-http",
        tools: ["platform_list_capabilities", "platform_get_action_details", "platform_execute_action"]
      })
      const list = yield* rest("GET", "/mcp/tools/list", apiKey)
      const viaRpc = yield* rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { "x-api-key": apiKey })
      expect(list.body).toEqual(viaRpc.body.result)
      const call = yield* rest("POST", "/mcp/tools/call", apiKey, { name: "platform_execute_action", arguments: { operationId: "me_get" } })
      expect(call.status).toBe(200)
      expect(call.body.structuredContent).toMatchObject({ companyId, keyKind: "company" })
      const failed = yield* rest("POST", "/mcp/tools/call", apiKey, {
        name: "platform_execute_action",
        arguments: { operationId: "projects_get", project_id: "prj_missing" }
      })
      expect([failed.status, failed.body.isError, failed.body.structuredContent.status]).toEqual([200, true, 404])
      // A company id in the query of the MCP request reaches the operation as the caller's company.
      const viaQuery = yield* rawRequest("POST", `/api/v0/mcp/tools/call?companyId=${companyId}`, {
        headers: { authorization: `Bearer ${personalAccessKey}` },
        body: JSON.stringify({ name: "platform_execute_action", arguments: { operationId: "me_get" } })
      })
      expect(viaQuery.body.structuredContent).toMatchObject({ keyKind: "personal", companyId })
      const noName = yield* rest("POST", "/mcp/tools/call", apiKey, { arguments: {} })
      expect([noName.status, noName.body]).toEqual([400, { error: expect.stringMatching(/"name"/) }])
      const unknown = yield* rest("POST", "/mcp/tools/call", apiKey, { name: "nope" })
      expect([unknown.status, unknown.body]).toEqual([400, { error: expect.stringMatching(/Unknown tool "nope"/) }])
    }))

  it.effect("the catalog is the OpenAPI document's operations minus the operator and MCP ones", () =>
    Effect.gen(function*() {
      const { apiKey } = yield* seedTenant("mcp-catalog")
      const openapi = (yield* rawRequest("GET", "/api/v0/openapi.json")).body
      const expected = Object.values<Record<string, { operationId: string }>>(openapi.paths)
        .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
        .filter((id) => !id.startsWith("admin_") && !id.startsWith("mcp_"))
      expect(expected.length).toBeGreaterThan(40)
      const all = Object.values<Record<string, { operationId: string }>>(openapi.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      expect(all).toEqual(expect.arrayContaining(["mcp_rpc", "mcp_info", "mcp_toolsList", "mcp_toolsCall"]))
      const call = (args: Record<string, unknown>) =>
        rest("POST", "/mcp/tools/call", apiKey, { name: "platform_list_capabilities", arguments: args })
      const categories: Array<{ name: string; operations: number }> = (yield* call({})).body.structuredContent.categories
      const listed: Array<string> = []
      for (const category of categories) {
        const operations = (yield* call({ category: category.name })).body.structuredContent.operations
        expect(operations).toHaveLength(category.operations)
        listed.push(...operations.map((operation: { operationId: string }) => operation.operationId))
      }
      expect(listed.sort()).toEqual(expected.sort())
    }))
})
