/**
 * Sample e-mails for the content tools' tests and benchmarks: a typical
 * ~2 KB HTML cold e-mail, and a spammy one that breaks most rules.
 */

export const typicalHtmlEmail = `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>Interview reviews</title>
<style>
  body { font-family: Helvetica, Arial, sans-serif; color: #222222; }
  p { line-height: 1.5; margin: 0 0 12px 0; }
  .footer { color: #777777; font-size: 12px; }
</style>
</head>
<body>
<p>Hi {{firstName}},</p>
<p>I hope you are well. I noticed that {{company}} is hiring backend engineers in Berlin, and I wanted to reach out
with a quick idea. We review take-home assignments for engineering teams: a senior engineer grades each submission
within two working days and writes a short, fair report that your hiring manager can share with the candidate.</p>
<p>Teams like yours usually spend four to six hours per candidate on reviews. With us that drops to the twenty
minutes it takes to read the report, and candidates get feedback they actually value. Our plan costs $49 per
review, with no minimum volume.</p>
<p>You can see a sample report on <a href="https://acme-reviews.example/sample-report">our website</a>, or simply reply
to this e-mail and I will send one for the role you are hiring for.</p>
<p>Would you be open to a quick call next week? Let me know what you think.</p>
<p>Best regards,<br>
Anna Schmidt<br>
Head of Partnerships, Acme Reviews</p>
<p class="footer">Acme Reviews GmbH, Torstraße 12, 10119 Berlin, Germany<br>
You are receiving this because we think our service is relevant to your team.
<a href="https://acme-reviews.example/unsubscribe?id={{contactId}}">Unsubscribe</a></p>
</body>
</html>
`

export const spammyHtmlEmail = `<html><body>
<p><font color="red" size="7">ACT NOW!!!</font> This is 100% FREE money, GUARANTEED!!! Click here to claim your prize $$$ 🎉🎉🎉🎉</p>
<p style="color: #00ff00">LIMITED TIME OFFER - earn extra cash from home, no strings attached!!!</p>
<p><a href="https://bit.ly/3xYz">www.paypal.com</a> <a href="http://192.168.10.20/win">here</a></p>
<img src="https://cdn.example/banner.png"><img src="https://cdn.example/prize.png">
<div style="display:none">cheap pills online pharmacy</div>
</body></html>`

export const spammySubject = "URGENT: WIN $1000 NOW!!! 🎉🎉"
