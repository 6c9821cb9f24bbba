import { useState } from "preact/hooks"
import { type CampaignRecord, type Credentials, get, type Metrics, type Page } from "../api.ts"
import { TimeChart } from "../Chart.tsx"
import { date, Loaded, percent, SandboxedHtml, Section, useLoad } from "../ui.tsx"

interface Recipient { readonly sentAt: string | null; readonly firstOpenedDate: string | null; readonly firstClickedDate: string | null }
interface Recipients { readonly items: ReadonlyArray<Recipient>; readonly total: number; readonly metrics: Metrics }

const hour = 3_600_000

/** Sent, first opens and first clicks per hour, from the first send on. */
const overTime = (recipients: ReadonlyArray<Recipient>) => {
  const times = (pick: (recipient: Recipient) => string | null) =>
    recipients.flatMap((recipient) => { const value = pick(recipient); return value === null ? [] : [Math.floor(Date.parse(value) / hour)] })
  const sent = times((recipient) => recipient.sentAt)
  const opened = times((recipient) => recipient.firstOpenedDate)
  const clicked = times((recipient) => recipient.firstClickedDate)
  const all = [...sent, ...opened, ...clicked]
  if (all.length === 0) return undefined
  const first = Math.min(...all)
  const hours = Math.max(...all) - first + 1
  const count = (values: ReadonlyArray<number>) => {
    const counts = Array.from({ length: hours }, () => 0)
    for (const value of values) counts[value - first] = (counts[value - first] ?? 0) + 1
    return counts
  }
  return {
    x: Array.from({ length: hours }, (_, index) => (first + index) * 3600),
    series: [{ label: "sent", values: count(sent) }, { label: "opened", values: count(opened) }, { label: "clicked", values: count(clicked) }]
  }
}


const CampaignDetail = (props: { credentials: Credentials; campaign: CampaignRecord }) => {
  const { campaign } = props
  const recipients = useLoad(() => get<Recipients>(props.credentials, `/marketing-campaigns/${campaign.id}/recipients`), [campaign.id])
  return (
    <Section title={`Campaign “${campaign.name}”`}>
      <p>Status: <strong>{campaign.status}</strong> · subject “{campaign.subject}” · started {date(campaign.startedAt)} · completed {date(campaign.completedAt)}</p>
      <Loaded state={recipients}>
        {({ metrics, items }) => {
          const chart = overTime(items)
          return (
            <>
              <div class="metrics" aria-label="Recipient metrics">
                <div><strong data-testid="metric-total">{metrics.total}</strong>recipients</div>
                <div><strong data-testid="metric-sent">{metrics.sent}</strong>sent</div>
                <div><strong>{metrics.failed}</strong>failed</div>
                <div><strong data-testid="metric-opened">{metrics.opened}</strong>opened ({percent(metrics.openRate)})</div>
                <div><strong>{metrics.clicked}</strong>clicked ({percent(metrics.clickRate)})</div>
              </div>
              {chart !== undefined && <TimeChart unit="recipients" title="Recipients per hour" {...chart} />}
            </>
          )
        }}
      </Loaded>
      <h3>Body preview</h3>
      <SandboxedHtml title={`Body of ${campaign.name}`} html={campaign.bodyDocument.html} />
    </Section>
  )
}

/** The company's campaigns, and one's status, recipient metrics over time and body. */
export const Campaigns = (props: { credentials: Credentials }) => {
  const campaigns = useLoad(() => get<Page<CampaignRecord>>(props.credentials, "/marketing-campaigns?pageSize=100"), [props.credentials])
  const [selected, setSelected] = useState<CampaignRecord>()
  return (
    <>
      <Loaded state={campaigns}>
        {(page) => page.items.length === 0 ? <p>No campaigns yet.</p> : (
          <table>
            <thead><tr><th>Name</th><th>Status</th><th>Subject</th><th>Updated</th></tr></thead>
            <tbody>
              {page.items.map((campaign) => (
                <tr>
                  <td><button type="button" class="secondary" onClick={() => setSelected(campaign)}>{campaign.name}</button></td>
                  <td>{campaign.status}</td><td>{campaign.subject}</td><td>{date(campaign.updated_date)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      {selected !== undefined && <CampaignDetail key={selected.id} credentials={props.credentials} campaign={selected} />}
    </>
  )
}
