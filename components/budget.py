"""CostBudget: the stack's monthly AWS Budgets cost budget, alerting the alarm topic.

Costs are those of the resources tagged `stage=<stage>` (every resource here carries it; the tag
must be activated as a cost allocation tag once per account, docs/deploy.md). The topic is told
when actual spend passes 80 % and 100 % of the amount, and when the month's forecast passes it,
so a runaway (a retry loop, a Textract backlog) is seen within a day, not on the invoice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import pulumi
import pulumi_aws as aws

from components._pulumi import child
from jobs.contract import layout

# (notification type, percent of the amount): Budgets compares actual spend, or the month's
# forecast, against each threshold and notifies once per month it is crossed.
THRESHOLDS = (("ACTUAL", 80), ("ACTUAL", 100), ("FORECASTED", 100))


@dataclass
class CostBudgetArgs:
    stage: str
    amount_usd: Decimal
    alarm_topic_arn: pulumi.Input[str]
    tags: dict[str, str] = field(default_factory=dict)


class CostBudget(pulumi.ComponentResource):
    budget_name: pulumi.Output[str]

    def __init__(self, name: str, args: CostBudgetArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:budget:CostBudget", name, None, opts)
        budget = aws.budgets.Budget(
            f"{name}-budget",
            name=f"{layout.stage_prefix(args.stage)}-monthly-cost",
            budget_type="COST",
            time_unit="MONTHLY",
            limit_amount=f"{args.amount_usd:.2f}",
            limit_unit="USD",
            cost_filters=[aws.budgets.BudgetCostFilterArgs(name="TagKeyValue", values=[f"user:stage${args.stage}"])],
            notifications=[
                aws.budgets.BudgetNotificationArgs(
                    notification_type=kind,
                    comparison_operator="GREATER_THAN",
                    threshold=percent,
                    threshold_type="PERCENTAGE",
                    subscriber_sns_topic_arns=[args.alarm_topic_arn],
                )
                for kind, percent in THRESHOLDS
            ],
            tags=args.tags,
            opts=child(self),
        )
        self.budget_name = budget.name
        self.register_outputs({"budget_name": self.budget_name})
