"""CostBudget: the stack's monthly AWS Budgets cost budgets, alerting the alarm topic.

The stage budget counts the resources tagged `stage=<stage>` (every resource here carries it, the
scheduled ECS tasks too, through their task definitions' tags; the tag must be activated as a cost
allocation tag once per account, docs/deploy.md). Textract's charges attach to no taggable
resource, so the spend the page cap exists for would never reach it: a second budget filtered on
the Textract service covers them (the account's Textract, whichever stack spent it). The topic is
told when actual spend passes 80 % and 100 % of an amount, and when the month's forecast passes
it, so a runaway (a retry loop, a Textract backlog) is seen within a day, not on the invoice.
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
# The service name Cost Explorer and Budgets filter Textract's charges by.
TEXTRACT_SERVICE = "Amazon Textract"


@dataclass
class CostBudgetArgs:
    stage: str
    amount_usd: Decimal
    alarm_topic_arn: pulumi.Input[str]
    # The Textract service budget's amount; None: amount_usd.
    textract_amount_usd: Decimal | None = None
    tags: dict[str, str] = field(default_factory=dict)


class CostBudget(pulumi.ComponentResource):
    budget_name: pulumi.Output[str]
    textract_budget_name: pulumi.Output[str]

    def __init__(self, name: str, args: CostBudgetArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("docuflow:budget:CostBudget", name, None, opts)
        prefix = layout.stage_prefix(args.stage)
        budget = self._budget(
            f"{name}-budget",
            f"{prefix}-monthly-cost",
            args.amount_usd,
            aws.budgets.BudgetCostFilterArgs(name="TagKeyValue", values=[f"user:stage${args.stage}"]),
            args,
        )
        textract = self._budget(
            f"{name}-textract-budget",
            f"{prefix}-textract-monthly-cost",
            args.textract_amount_usd or args.amount_usd,
            aws.budgets.BudgetCostFilterArgs(name="Service", values=[TEXTRACT_SERVICE]),
            args,
        )
        self.budget_name = budget.name
        self.textract_budget_name = textract.name
        self.register_outputs({"budget_name": self.budget_name, "textract_budget_name": self.textract_budget_name})

    def _budget(
        self,
        resource: str,
        budget_name: str,
        amount: Decimal,
        cost_filter: aws.budgets.BudgetCostFilterArgs,
        args: CostBudgetArgs,
    ) -> aws.budgets.Budget:
        return aws.budgets.Budget(
            resource,
            name=budget_name,
            budget_type="COST",
            time_unit="MONTHLY",
            limit_amount=f"{amount:.2f}",
            limit_unit="USD",
            cost_filters=[cost_filter],
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
