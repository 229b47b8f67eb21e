/** A decision question as the caller sent it (after validation). */
export type QuestionType = 'noul' | 'choice' | 'score';

export interface DecisionQuestion {
  type: QuestionType;
  instructions: unknown;
  criteria?: unknown;
}

export interface DecisionRequest {
  model: string;
  state: string | Record<string, unknown> | unknown[];
  images?: string[];
  questions: Record<string, DecisionQuestion>;
}

/**
 * What the worker needs to turn the upstream's output back into answers: the caller's id, the label
 * the model saw (`q1`, `q2`, ...), and per type the option keys or the level legend.
 */
export interface QuestionPlan {
  id: string;
  label: string;
  type: QuestionType;
  /** choice: option keys, in the caller's order. */
  options?: string[];
  /** score: level index (as a string) to the level as the caller described it. */
  legend?: Record<string, unknown>;
}

export interface NoulAnswer {
  type: 'noul';
  noul: number;
}
export interface ChoiceAnswer {
  type: 'choice';
  choice: string;
  confidence: number;
  probabilities: Record<string, number>;
}
export interface ScoreAnswer {
  type: 'score';
  score: number;
  confidence: number;
  legend: Record<string, unknown>;
  probabilities: Record<string, number>;
}
export type DecisionAnswer = NoulAnswer | ChoiceAnswer | ScoreAnswer;

/** What the worker returns to the pod. */
export interface DecisionResult {
  answers: Record<string, DecisionAnswer>;
  usage: { input_tokens: number; output_tokens: number };
}

/** The name of the structured-output schema the gateway asks for (the simulator recognises it). */
export const DECISION_SCHEMA_NAME = 'systemone_decision';
