"""The OpenAI-compatible judge client (openai itself is imported only when a judge is called)."""

from tempo_eval.llm.provider import JudgeReply, OpenAIProvider, Usage

__all__ = ["JudgeReply", "OpenAIProvider", "Usage"]
