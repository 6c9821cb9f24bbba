import { EventSourceParserStream } from "eventsource-parser/stream"
import { useEffect, useRef, useState } from "preact/hooks"
import {
  type AgentRecord,
  type ChatThreadRecord,
  type ChatThreadSummaryRecord,
  type Credentials,
  type EmployeeRecord,
  get,
  open,
  type Page
} from "../api.ts"
import { date, Loaded, Section, useAction, useLoad } from "../ui.tsx"

/** Who one talks to: an agent or an employee, each under its own path. */
interface Partner { readonly kind: "agents" | "employees"; readonly id: string; readonly name: string; readonly about: string }

/** One line of the conversation as shown: a person's or the partner's words, or a tool the partner used. */
interface Line { readonly role: "user" | "assistant" | "tool"; readonly text: string }

/** The stored thread's messages as lines: tool calls by their name, tool results left out (they are long and raw). */
const linesOf = (thread: ChatThreadRecord): ReadonlyArray<Line> =>
  thread.messages.flatMap((message): ReadonlyArray<Line> => {
    if (message.role === "tool") return []
    const tools = (message.toolCalls ?? []).map((call): Line => ({ role: "tool", text: `used ${call.name}` }))
    return message.content === "" ? tools : [...tools, { role: message.role, text: message.content }]
  })

/**
 * Streams one answer: the server-sent events of `POST …/chat`, parsed by
 * `eventsource-parser`; `text` deltas grow the answer as they come.
 */
const streamAnswer = async (
  credentials: Credentials,
  partner: Partner,
  body: { message: string; threadId?: string },
  onLine: (update: (lines: ReadonlyArray<Line>) => ReadonlyArray<Line>) => void,
  signal: AbortSignal
) => {
  const response = await open(credentials, `/${partner.kind}/${partner.id}/chat`, { ...body, stream: true }, signal)
  // A reader rather than `for await`: not every browser iterates streams yet.
  const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader()
  let threadId: string | undefined
  while (true) {
    const { done, value: event } = await events.read()
    if (done) break
    const data = JSON.parse(event.data) as { delta?: string; name?: string; threadId?: string; error?: string }
    if (event.event === "text") {
      onLine((lines) => {
        const last = lines.at(-1)
        return last?.role === "assistant" ? [...lines.slice(0, -1), { role: "assistant", text: last.text + (data.delta ?? "") }] : [...lines, { role: "assistant", text: data.delta ?? "" }]
      })
    } else if (event.event === "tool_call") {
      onLine((lines) => [...lines, { role: "tool", text: `used ${data.name}` }])
    } else if (event.event === "done") {
      threadId = data.threadId
    } else if (event.event === "error") {
      throw new Error(data.error ?? "The conversation failed")
    }
  }
  if (threadId === undefined) throw new Error("The answer ended before it was done")
  return threadId
}

const Chat = (props: { credentials: Credentials; partner: Partner }) => {
  const { credentials, partner } = props
  const threads = useLoad(
    () => get<Page<ChatThreadSummaryRecord>>(credentials, `/${partner.kind}/${partner.id}/threads?pageSize=20`),
    [credentials, partner.id]
  )
  const [threadId, setThreadId] = useState<string>()
  const [lines, setLines] = useState<ReadonlyArray<Line>>([])
  const [busy, setBusy] = useState(false)
  const { run, Failure } = useAction()
  // Leaving the conversation closes its stream, which stops the agent on the server.
  const streams = useRef(new AbortController())
  useEffect(() => () => streams.current.abort(), [])
  const openThread = (id: string) =>
    run(() => get<ChatThreadRecord>(credentials, `/${partner.kind}/${partner.id}/threads/${id}`).then((thread) => {
      setThreadId(thread.id)
      setLines(linesOf(thread))
    }))
  const send = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const message = String(new FormData(form).get("message")).trim()
    if (message === "") return
    form.reset()
    setLines((current) => [...current, { role: "user", text: message }])
    setBusy(true)
    run(() =>
      streamAnswer(credentials, partner, { message, ...(threadId === undefined ? {} : { threadId }) }, setLines, streams.current.signal)
        .then((id) => {
          setThreadId(id)
          threads.reload()
        })
        .finally(() => setBusy(false))
    )
  }
  return (
    <Section title={`Conversation with ${partner.name}`}>
      <div class="chat">
        <nav aria-label="Earlier conversations" class="threads">
          <button type="button" class="secondary" onClick={() => { setThreadId(undefined); setLines([]) }}>New conversation</button>
          <Loaded state={threads}>
            {(page) => page.items.length === 0 ? <p>No earlier conversations.</p> : (
              <ul>
                {page.items.map((thread) => (
                  <li>
                    <button type="button" class="link" aria-current={thread.id === threadId ? "true" : undefined} onClick={() => openThread(thread.id)}>
                      {thread.title}
                    </button>
                    <small>{date(thread.updated)}</small>
                  </li>
                ))}
              </ul>
            )}
          </Loaded>
        </nav>
        <div class="conversation">
          <ol class="messages" aria-label="Messages" aria-live="polite" aria-busy={busy}>
            {lines.map((line) => (
              <li class={line.role} data-role={line.role}>
                <span class="visually-hidden">{line.role === "user" ? "You" : line.role === "tool" ? "Tool" : partner.name}: </span>{line.text}
              </li>
            ))}
          </ol>
          <form class="inline" onSubmit={send}>
            <label class="grow">Message<textarea name="message" rows={2} required maxLength={20000} /></label>
            <button type="submit" disabled={busy}>{busy ? "Answering…" : "Send"}</button>
          </form>
          <Failure />
        </div>
      </div>
    </Section>
  )
}

const load = async (credentials: Credentials): Promise<ReadonlyArray<Partner>> => {
  const [agents, employees] = await Promise.all([
    get<Page<AgentRecord>>(credentials, "/agents?pageSize=100"),
    get<Page<EmployeeRecord>>(credentials, "/employees?pageSize=100")
  ])
  return [
    ...agents.items.map((agent): Partner => ({ kind: "agents", id: agent.id, name: agent.name, about: `agent — ${agent.status}${agent.description === "" ? "" : `, ${agent.description}`}` })),
    ...employees.items.map((employee): Partner => ({ kind: "employees", id: employee.id, name: employee.name, about: `employee — ${employee.role}` }))
  ]
}

/** The company's agents and employees; chat with one, its answers streamed, earlier conversations kept. */
export const Agents = (props: { credentials: Credentials }) => {
  const partners = useLoad(() => load(props.credentials), [props.credentials])
  const [partner, setPartner] = useState<Partner>()
  return (
    <>
      <Section title="Agents and employees">
        <Loaded state={partners}>
          {(all) => all.length === 0 ? <p>No agents or employees yet (create them with POST /api/v0/agents or /employees).</p> : (
            <ul class="partners">
              {all.map((candidate) => (
                <li>
                  <button type="button" class="secondary" aria-pressed={candidate.id === partner?.id} onClick={() => setPartner(candidate)}>
                    Chat with {candidate.name}
                  </button>{" "}
                  <small>{candidate.about}</small>
                </li>
              ))}
            </ul>
          )}
        </Loaded>
      </Section>
      {partner !== undefined && <Chat key={partner.id} credentials={props.credentials} partner={partner} />}
    </>
  )
}
