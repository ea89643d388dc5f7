package adk

func appenderChild() int { return 0 }
