import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type OpenAI from "openai"
import { loopbackServer, sdkClients } from "../../support/LoopbackServer.ts"
import { callTool, mcpClient } from "../../support/Mcp.ts"
import { type Reply, startStubUpstream, type StubUpstream } from "../../support/StubUpstream.ts"
import { pgliteStorage } from "../../support/TestServer.ts"

/**
 * A model drives the MCP tools end to end: a scripted stub model behind the
 * project's own gateway (official OpenAI SDK → gateway → stub), whose tool
 * calls the official MCP client runs. Each step of the script reads the
 * previous tool result, as a model would: search, read the details, execute.
 */

const toolCall = (step: number, name: string, args: Record<string, unknown>): Reply => ({
  tool: { id: `call_${step}`, name, arguments: JSON.stringify(args) }
})

const scriptedModel = (body: any): Reply | undefined => {
  const messages: Array<any> = body.messages ?? []
  const results = messages.filter((message) => message.role === "tool").map((message) => JSON.parse(message.content))
  const projectId = /project (\S+)/.exec(messages.find((message) => message.role === "user")?.content ?? "")?.[1]
  switch (results.length) {
    case 0:
      return toolCall(0, "platform_list_capabilities", { query: "update project" })
    case 1:
      return toolCall(1, "platform_get_action_details", { operationId: results[0].operations[0].operationId })
    case 2: {
      const details = results[1]
      if (!details.arguments.required.includes("project_id")) return { text: "I cannot tell how to name the project" }
      return toolCall(2, "platform_execute_action", { operationId: details.operationId, project_id: projectId, name: "Renamed by the model" })
    }
    default:
      return { text: `Renamed: the project is now called ${results[2].name}` }
  }
}

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/models/mcp/Upstream") {}

const upstream = Layer.effect(
  Upstream,
  Effect.acquireRelease(Effect.promise(() => startStubUpstream({ reply: scriptedModel })), (stub) => Effect.promise(stub.close))
)

const server = Layer.unwrap(Upstream.useSync((stub) =>
  loopbackServer(pgliteStorage, {
    llmModels: Option.some([{ id: "smart", provider: "openai", upstream: "stub-large", tier: "highest" }]),
    openaiBaseUrl: Option.some(stub.url)
  })
)).pipe(Layer.provideMerge(upstream))

it.layer(server, { timeout: 60_000, excludeTestServices: true })("a model using the MCP tools", (it) => {
  it.effect("lists, describes and executes through the gateway until the project is renamed", () =>
    Effect.scoped(Effect.gen(function*() {
      const { openai, tenant } = yield* sdkClients("mcp-model")
      const { client: mcp } = yield* mcpClient({ "X-API-Key": tenant.apiKey })
      const project = yield* Effect.promise(() => openai.post<{ id: string }>("/projects", { body: { name: "Before" } }))
      const { tools } = yield* Effect.promise(() => mcp.listTools())
      const functions: Array<OpenAI.ChatCompletionTool> = tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema }
      }))
      const messages: Array<OpenAI.ChatCompletionMessageParam> = [
        { role: "user", content: `Rename project ${project.id} to "Renamed by the model"` }
      ]
      const called: Array<string> = []
      for (let turn = 0; turn < 6; turn++) {
        const completion = yield* Effect.promise(() => openai.chat.completions.create({ model: "smart", messages, tools: functions }))
        const message = completion.choices[0].message
        messages.push(message)
        if (message.tool_calls === undefined || message.tool_calls.length === 0) break
        for (const call of message.tool_calls) {
          if (call.type !== "function") continue
          called.push(call.function.name)
          const result = yield* callTool(mcp, call.function.name, JSON.parse(call.function.arguments))
          expect(result.isError).toBeFalsy()
          messages.push({ role: "tool", tool_call_id: call.id, content: result.content[0].type === "text" ? result.content[0].text : "" })
        }
      }
      expect(called).toEqual(["platform_list_capabilities", "platform_get_action_details", "platform_execute_action"])
      expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "Renamed: the project is now called Renamed by the model" })
      const renamed = yield* Effect.promise(() => openai.get<{ name: string }>(`/projects/${project.id}`))
      expect(renamed.name).toBe("Renamed by the model")
      const stub = yield* Upstream
      const offered = stub.requests.at(-1)?.body.tools.map((tool: any) => tool.function.name)
      expect(offered).toEqual(["platform_list_capabilities", "platform_get_action_details", "platform_execute_action"])
    })))
})
