import type { HttpApiScalar } from "effect/http-api"

/**
 * What the OpenAPI document and the `/docs` reference page tell a developer
 * beyond the endpoints themselves: the introduction, the security schemes'
 * descriptions, examples of the fields every area shares, and the order of
 * the groups.
 */

/** The document's `info.description` (Markdown): what applies to every endpoint. */
export const introduction = `
A multi-tenant business platform: companies, their people and keys, an OpenAI- and Anthropic-compatible
model gateway, projects, memories, agents, scheduled AI tasks, e-mail campaigns and outreach sequences,
content and document tools, job search, and an MCP server over all of it.

## Authentication

Send a key in \`X-API-Key: <key>\` (or \`Authorization: Bearer <key>\`).

- A **company API key** (\`plk_…\`) acts for its company, as the user who created it. Nothing else is needed.
- A **personal access key** (\`pak_…\`) is a person: name the company with \`X-Company-ID: cmp_…\` (or the
  \`companyId\` query parameter) on every request.

The first start of a fresh server prints one of each. A missing, unknown, expired or revoked key answers 401.
A company the key cannot reach answers 404, as if it did not exist; a role or plan without the feature, 403.

## Errors

Every error is JSON with one field, \`{"error": "…"}\`, and a message that names the problem — the field, the
missing permission, the setting to set. Every response carries an \`X-Request-Id\` (send your own to trace
a call). Unknown body fields and query parameters answer 400 naming them.

## Pagination

Lists answer \`{items, total, pages, hasNext}\` and take \`page\` (from 1) and \`pageSize\` (1–100, default 10).

## Retries

Retry 429 and 500 answers and network failures with exponential backoff and jitter, honouring \`Retry-After\`;
never retry 400, 401, 403 or 404. The typed client (\`src/client.ts\`) does exactly this.

## Rate limits

Each key has a bucket of \`RATE_LIMIT_PER_MINUTE\` requests (600 by default), refilled continuously. Every
authenticated response says where it stands (\`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`); past it, 429
with \`Retry-After\`.

## Credits

Model calls, design chats, agent conversations, drafted e-mails and scheduled tasks cost credits of the caller's organization; job
search costs data credits (1 per search). The worst case is held before the call and the real cost settled
after it, so usage never passes the limit; with too few credits left a call answers 403
\`{"error": "Insufficient credits"}\`. \`GET /api/v0/organizations\` shows the balance.
`.trim()

/** Group order on the page: getting started first, the operator API (off unless `ADMIN_API_KEY`) last. */
const lastGroups = ["mcp", "admin"]

/** Examples of the fields many schemas share, so that samples read like real requests. */
const idExamples: Record<string, string> = {
  companyId: "cmp_019a3b6f2c1e7d4a9b0c5e8f1a2b3c4d",
  organizationId: "org_019a3b6f2c1e7d4a9b0c5e8f1a2b3c4e",
  userId: "usr_019a3b6f2c1e7d4a9b0c5e8f1a2b3c4f",
  ownerUserId: "usr_019a3b6f2c1e7d4a9b0c5e8f1a2b3c4f",
  uid: "usr_019a3b6f2c1e7d4a9b0c5e8f1a2b3c4f",
  projectId: "prj_019a3b6f2c1e7d4a9b0c5e8f1a2b3c50",
  project_id: "prj_019a3b6f2c1e7d4a9b0c5e8f1a2b3c50",
  campaignId: "cpg_019a3b6f2c1e7d4a9b0c5e8f1a2b3c51",
  listId: "lst_019a3b6f2c1e7d4a9b0c5e8f1a2b3c52",
  templateId: "tpl_019a3b6f2c1e7d4a9b0c5e8f1a2b3c53",
  sequenceId: "seq_019a3b6f2c1e7d4a9b0c5e8f1a2b3c54",
  agentId: "agt_019a3b6f2c1e7d4a9b0c5e8f1a2b3c55",
  employeeId: "emp_019a3b6f2c1e7d4a9b0c5e8f1a2b3c56",
  task_id: "tsk_019a3b6f2c1e7d4a9b0c5e8f1a2b3c57",
  taskId: "tsk_019a3b6f2c1e7d4a9b0c5e8f1a2b3c57"
}

const fieldExamples: Record<string, unknown> = {
  ...idExamples,
  email: "ada@example.com",
  fromEmail: "news@example.com",
  replyTo: "replies@example.com",
  fromName: "Example Inc.",
  displayName: "Ada Lovelace",
  subject: "Our spring collection is here",
  model: "balanced",
  page: 1,
  pageSize: 10,
  total: 42,
  pages: 5,
  hasNext: true,
  seats: 10,
  companyLimit: 10,
  creditLimit: 100000,
  creditUsage: 1250,
  dataCreditLimit: 1000,
  dataCreditUsage: 12
}

/** The component schemas whose `id` has a known prefix. */
const idOfSchema: Record<string, string> = {
  Company: idExamples.companyId!,
  AdminCompany: idExamples.companyId!,
  AdminOrganization: idExamples.organizationId!,
  OrganizationEntry: idExamples.organizationId!,
  AdminUser: idExamples.userId!,
  Project: idExamples.projectId!,
  Campaign: idExamples.campaignId!,
  ContactList: idExamples.listId!,
  CampaignTemplate: idExamples.templateId!,
  Sequence: idExamples.sequenceId!,
  Agent: idExamples.agentId!,
  Employee: idExamples.employeeId!,
  ScheduledTask: idExamples.taskId!
}

type Json = Record<string, any>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null

/**
 * A JSON number's own range: bounds at the safe integers say nothing (and
 * make samples show -9007199254740991), so they go; a field without an
 * example gets the shared one for its name.
 */
const refineSchema = (schema: Json, schemaName?: string): void => {
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum
  if (isObject(schema.properties)) {
    for (const [name, property] of Object.entries<Json>(schema.properties)) {
      if (!isObject(property)) continue
      const example = name === "id" && schemaName !== undefined ? idOfSchema[schemaName] : fieldExamples[name]
      if (example !== undefined && property.examples === undefined && property.$ref === undefined) {
        property.examples = [example]
      }
    }
  }
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) value.forEach((item) => isObject(item) && refineSchema(item))
    else if (isObject(value)) refineSchema(value)
  }
}

/** The parameters of every operation get the same shared examples as body fields. */
const refineParameters = (paths: Json) => {
  for (const methods of Object.values<Json>(paths)) {
    for (const operation of Object.values<Json>(methods)) {
      for (const parameter of isObject(operation) && Array.isArray(operation.parameters) ? operation.parameters : []) {
        const example = fieldExamples[parameter.name]
        if (example !== undefined && parameter.example === undefined) parameter.example = example
      }
    }
  }
}

/** The reference's additions to the generated OpenAPI document (an `OpenApi.Transform`). */
export const referenceDocument = (spec: Json): Json => {
  const schemes: Json = spec.components?.securitySchemes ?? {}
  if (isObject(schemes.apiKey)) {
    schemes.apiKey.description = "A company API key (`plk_…`), or a personal access key (`pak_…`) with `X-Company-ID`."
  }
  if (isObject(schemes.bearer)) {
    // Lower case as the HTTP authentication scheme registry spells it: the reference page reads "Bearer" as Basic.
    schemes.bearer.scheme = "bearer"
    schemes.bearer.description = "The same key as `Authorization: Bearer <key>`; the operator API's `ADMIN_API_KEY`."
  }
  if (Array.isArray(spec.tags)) {
    spec.tags = [
      ...spec.tags.filter((tag: Json) => !lastGroups.includes(tag.name)),
      ...lastGroups.flatMap((name) => spec.tags.filter((tag: Json) => tag.name === name))
    ]
  }
  for (const [name, schema] of Object.entries<Json>(spec.components?.schemas ?? {})) refineSchema(schema, name)
  // Inline schemas too: request bodies, parameters and envelopes that are not components.
  refineSchema(spec.paths ?? {})
  refineParameters(spec.paths ?? {})
  return spec
}

/** The `/docs` page: the key header selected, with a placeholder key, and curl first. */
export const scalarConfig = {
  authentication: {
    preferredSecurityScheme: "apiKey",
    securitySchemes: { apiKey: { name: "X-API-Key", in: "header", value: "plk_your_company_key" } }
  },
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  hiddenClients: { ruby: true, php: true, clojure: true, objc: true, ocaml: true, r: true, swift: true, powershell: true },
  showDeveloperTools: "never",
  // The schemas are shown with each operation; their own sidebar group ("Models") would sit beside the model catalog's.
  hideModels: true,
  defaultOpenAllTags: false,
  showOperationId: true
} as unknown as HttpApiScalar.ScalarConfig
