import { Effect, Schema } from "effect"
import { describeSchemaMessage } from "../../http/ErrorResponses.ts"
import type { CallToolResult, McpTool } from "./Api.ts"
import { type Catalog, type Operation, search } from "./Catalog.ts"
import { actionError, type CallerHeaders, maxStreamEvents } from "./Execute.ts"

/**
 * The three tools, the whole API behind them: browse or search
 * (`platform_list_capabilities`), read one operation's contract
 * (`platform_get_action_details`), run it as the caller
 * (`platform_execute_action`). Inputs are Effect Schemas; the JSON Schemas
 * clients see are derived from them.
 */

const ListCapabilitiesInput = Schema.Struct({
  category: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(100)).annotate({
      description: "A category name from the category list (e.g. \"projects\"): lists its operations."
    })
  ),
  query: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(500)).annotate({
      description: "Keywords (e.g. \"rename project\"): operations ranked by relevance, across all categories or within `category`."
    })
  )
})

const GetActionDetailsInput = Schema.Struct({
  operationId: Schema.String.check(Schema.isMaxLength(200)).annotate({
    description: "The operation's id, as listed by platform_list_capabilities (e.g. \"projects_update\")."
  })
})

const ExecuteActionFields = Schema.Struct({
  operationId: Schema.String.check(Schema.isMaxLength(200)).annotate({
    description: "The operation to run (e.g. \"projects_update\")."
  })
}).annotate({
  description: "operationId plus the operation's path, query and body fields, all flat at the top level."
})

/** The operation's own arguments ride beside `operationId`; its endpoint's schemas judge them. */
const ExecuteActionInput = Schema.StructWithRest(ExecuteActionFields, [Schema.Record(Schema.String, Schema.Unknown)])

/**
 * A tool's JSON Schema: closed (`additionalProperties: false`) for the
 * browsing tools, whose decoder refuses unknown arguments too; open for
 * execution, whose further arguments belong to the operation.
 */
const inputSchema = (schema: Schema.Top, onExcessProperty: "error" | "ignore"): Record<string, unknown> => {
  const { $schema: _dialect, ...document } = Schema.toJsonSchemaDocument(schema, { onExcessProperty }).schema
  return document
}

const listDescription = [
  "Browse what this platform's API can do. Start here.",
  "Without arguments: the categories (areas such as projects, agents, memories) with a one-line description and their number of operations.",
  "With `category`: that category's operations — operationId, HTTP method, path, summary and whether it only reads.",
  "With `query`: operations from every category ranked by the keywords (combine with `category` to search within one).",
  "Next step: platform_get_action_details with an operationId, then platform_execute_action.",
  "Example: {\"query\": \"update project\"} → projects_update, PATCH /api/v0/projects/{project_id}."
].join("\n")

const detailsDescription = [
  "Everything needed to call one operation: summary, description, its arguments as one JSON Schema (path, query and body fields together, flat), the body fields, the success response's JSON Schema and the error statuses it may answer.",
  "Call it before platform_execute_action to learn the exact argument names and types.",
  "Example: {\"operationId\": \"projects_update\"}."
].join("\n")

const executeDescription = [
  "Runs one operation of the platform's API with the caller's own credentials and permissions (same company, role, plan, credits and rate limit as a direct REST call), and answers the REST response's JSON.",
  "Arguments: `operationId` plus the operation's arguments flat at the top level — path parameters, query parameters and body fields side by side, as platform_get_action_details lists them.",
  "A failure comes back as an error result with the HTTP status and message (400 names the wrong or missing field; 404 also means the resource belongs to another company; 403 a role or plan limit).",
  "Streaming operations answer their collected events; file uploads (multipart) are not available here.",
  "Example: {\"operationId\": \"projects_update\", \"project_id\": \"prj_…\", \"name\": \"New name\"}."
].join("\n")

const annotations = (title: string, readOnly: boolean) => ({
  title,
  readOnlyHint: readOnly,
  destructiveHint: !readOnly,
  idempotentHint: readOnly,
  openWorldHint: false
})

export const toolDefinitions: ReadonlyArray<typeof McpTool.Type> = [
  {
    name: "platform_list_capabilities",
    title: "List platform capabilities",
    description: listDescription,
    inputSchema: inputSchema(ListCapabilitiesInput, "error"),
    annotations: annotations("List platform capabilities", true)
  },
  {
    name: "platform_get_action_details",
    title: "Get action details",
    description: detailsDescription,
    inputSchema: inputSchema(GetActionDetailsInput, "error"),
    annotations: annotations("Get action details", true)
  },
  {
    name: "platform_execute_action",
    title: "Execute an action",
    description: executeDescription,
    inputSchema: inputSchema(ExecuteActionFields, "ignore"),
    annotations: annotations("Execute an action", false)
  }
]

export const toolNames = toolDefinitions.map((tool) => tool.name)

const result = (structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(structured) }],
  structuredContent: structured
})

/** A tool used wrongly: an error result the model can read and correct. */
const toolError = (error: string): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify({ error }) }],
  structuredContent: { error },
  isError: true
})

const searchLimit = 15

const listing = (operation: Operation) => ({
  operationId: operation.operationId,
  method: operation.method,
  path: operation.path,
  summary: operation.summary,
  readOnly: operation.readOnly
})

/** One JSON Schema for all of an operation's arguments, flat, as platform_execute_action takes them. */
const argumentsSchema = (operation: Operation) => {
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  const parameter = (where: string) => (item: Operation["pathParameters"][number]) => {
    const schema = typeof item.schema === "object" ? item.schema : {}
    properties[item.name] = { ...schema, description: item.description ?? `${where} parameter` }
    if (item.required) required.push(item.name)
  }
  operation.pathParameters.forEach(parameter("path"))
  operation.queryParameters.forEach(parameter("query"))
  const body = operation.body?.schema
  if (typeof body === "object" && body !== null && "properties" in body && typeof body.properties === "object") {
    Object.assign(properties, body.properties)
    if ("required" in body && Array.isArray(body.required)) required.push(...body.required.filter((name) => typeof name === "string"))
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required: [...new Set(required)] } : {}),
    additionalProperties: operation.body !== undefined && operation.body.fields === undefined
  }
}

const details = (operation: Operation) => {
  const example: Record<string, unknown> = { operationId: operation.operationId }
  for (const item of operation.pathParameters) example[item.name] = `<${item.name}>`
  return {
    operationId: operation.operationId,
    category: operation.category,
    method: operation.method,
    path: operation.path,
    summary: operation.summary,
    description: operation.description,
    readOnly: operation.readOnly,
    arguments: argumentsSchema(operation),
    pathParameters: operation.pathParameters.map((item) => item.name),
    queryParameters: operation.queryParameters.map((item) => item.name),
    bodyFields: operation.body?.fields ?? null,
    ...(operation.body !== undefined && operation.body.fields === undefined ? { body: operation.body.schema } : {}),
    response: operation.response,
    errors: operation.errors,
    execution: operation.multipart
      ? "Not available through MCP: this operation takes a multipart file upload; call the REST endpoint."
      : operation.response.contentTypes.includes("text/event-stream")
      ? `May stream: the events are collected (at most ${maxStreamEvents}) and answered together.`
      : "Available through platform_execute_action.",
    example
  }
}

export interface Tools {
  /** The tool's result, or undefined for a tool that does not exist. */
  readonly call: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    caller: CallerHeaders
  ) => Effect.Effect<CallToolResult> | undefined
}

export const makeTools = (
  catalog: Catalog,
  execute: (operation: Operation, args: Readonly<Record<string, unknown>>, caller: CallerHeaders) => Effect.Effect<CallToolResult>
): Tools => {
  const allOperations = [...catalog.operations.values()]
  const categoryNames = catalog.categories.map((category) => category.name)

  /** The operation's result, or an error result pointing the model to similar operations. */
  const withOperation = (operationId: string, use: (operation: Operation) => Effect.Effect<CallToolResult>) => {
    const operation = catalog.operations.get(operationId)
    if (operation !== undefined) return use(operation)
    const similar = search(allOperations, operationId, 5).map((candidate) => candidate.operationId)
    return Effect.succeed(toolError(
      `Unknown operationId "${operationId}"${similar.length > 0 ? `; similar: ${similar.join(", ")}` : ""}. ` +
        "Use platform_list_capabilities to find operations."
    ))
  }

  const listCapabilities = (input: typeof ListCapabilitiesInput.Type): CallToolResult => {
    const category = input.category === undefined ? undefined : catalog.categories.find((item) => item.name === input.category)
    if (input.category !== undefined && category === undefined) {
      return toolError(`Unknown category "${input.category}": one of ${categoryNames.join(", ")}`)
    }
    if (input.query !== undefined && input.query.trim() !== "") {
      const ranked = search(category?.operations ?? allOperations, input.query, searchLimit)
      return result({
        query: input.query,
        ...(category === undefined ? {} : { category: category.name }),
        operations: ranked.map((operation) => ({ ...listing(operation), category: operation.category })),
        ...(ranked.length === 0 ? { hint: "No operation matches: try other words, or list the categories." } : {})
      })
    }
    if (category !== undefined) {
      return result({ category: category.name, description: category.description, operations: category.operations.map(listing) })
    }
    return result({
      categories: catalog.categories.map((item) => ({
        name: item.name,
        description: item.description,
        operations: item.operations.length
      }))
    })
  }

  const decoding = <S extends Schema.Top & { readonly DecodingServices: never }>(
    schema: S,
    args: unknown,
    use: (input: S["Type"]) => Effect.Effect<CallToolResult>
  ) =>
    Schema.decodeUnknownEffect(schema)(args, { onExcessProperty: "error" }).pipe(
      Effect.matchEffect({
        onFailure: (issue) => Effect.succeed(toolError(describeSchemaMessage("tool argument", issue.message))),
        onSuccess: use
      })
    )

  return {
    call: (name, args, caller) => {
      switch (name) {
        case "platform_list_capabilities":
          return decoding(ListCapabilitiesInput, args, (input) => Effect.succeed(listCapabilities(input)))
        case "platform_get_action_details":
          return decoding(GetActionDetailsInput, args, (input) =>
            withOperation(input.operationId, (operation) => Effect.succeed(result(details(operation)))))
        case "platform_execute_action":
          return decoding(ExecuteActionInput, args, ({ operationId, ...rest }) =>
            withOperation(operationId, (operation) =>
              operation.multipart
                ? Effect.succeed(actionError(
                  400,
                  `${operationId} takes a multipart file upload, which MCP does not carry: ` +
                    `call ${operation.method} ${operation.path} over REST`
                ))
                : execute(operation, rest, caller)))
        default:
          return undefined
      }
    }
  }
}
