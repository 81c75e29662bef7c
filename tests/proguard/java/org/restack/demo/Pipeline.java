package org.restack.demo;

import java.util.function.IntUnaryOperator;

final class Pipeline {
  private Pipeline() {}

  static int run(int seed, IntUnaryOperator step) {
    Stage stage = new Stage(step);
    return stage.apply(seed);
  }

  static final class Stage {
    private final IntUnaryOperator step;

    Stage(IntUnaryOperator step) {
      this.step = step;
    }

    int apply(int value) {
      int next = step.applyAsInt(value);
      if (next > 5) {
        throw new UnsupportedOperationException("stage overflow " + next);
      }
      return next;
    }
  }
}
